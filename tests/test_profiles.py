"""The settings file: every profile's knobs, custom profiles by inheritance, the declared
environment variables, and the generated docs/settings.md."""
from __future__ import annotations

import ast
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import pytest

from judgelab import config, profiles, settings_file
from judgelab.study_models import PAPER_JUDGES

ROOT = Path(__file__).resolve().parents[1]
BUILT_IN = ("smoke", "demo", "paper")


def _types(value):
    """The shape of a knob's value: its type, with tuples and tables described element-wise."""
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return ("tuple", {type(v).__name__ for v in value if v is not None})
    return type(value).__name__


def test_every_profile_sets_every_study_with_the_same_keys_and_types():
    assert profiles.PROFILES[:3] == BUILT_IN
    studies = profiles.studies("demo")
    assert {"sage", "narrative", "narrative_judges", "cost_ood", "human", "behaviour", "claims"} <= set(studies)
    for study in studies:
        by_profile = {p: profiles.knobs(study, p) for p in profiles.PROFILES}
        keys = {p: set(k) for p, k in by_profile.items()}
        assert all(k == keys["demo"] for k in keys.values()), (study, keys)
        for key in keys["demo"]:
            if key == "collections":        # the paper profile adds VisPub; each collection alike
                colls = [c for k in by_profile.values() for c in k["collections"].values()]
                assert all(set(c) >= set(colls[0]) for c in colls), study
                continue
            values = [k[key] for k in by_profile.values() if k[key] is not None]
            if values and all(isinstance(v, dict) for v in values):  # a table per study: each entry alike
                for sub in set().union(*values):
                    shapes = {repr(_types(v[sub])) for v in values if v.get(sub) is not None}
                    assert len(shapes) <= 1, (study, key, sub, shapes)
                continue
            # an empty array (the class profile's "no layer") has no element type to compare
            shapes = {repr(_types(v)) for v in values if v != ()}
            assert len(shapes) <= 1, (study, key, shapes)


def test_none_and_arrays_are_read_as_the_code_expects():
    assert profiles.knobs("sage", "paper")["temperature"] is None           # "none" in the file
    assert profiles.knobs("sage", "demo")["modes"] == ("content", "title")  # an array is a tuple
    assert profiles.knobs("narrative", "paper")["collections"]["vispub"]["year_range"] == (1990, 2022)
    assert profiles.knobs("human", "paper")["n_stories"] == {"confederacy": 65, "artifice": 36}


CUSTOM = """
[overrides]
JUDGELAB_MODEL = { key = "gateway.model", type = "str", meaning = "m" }
[base]
description = "the parent"
[base.sage]
per_category = { canonical = 2, pulp = 2, llm = 2 }  # stories per category
seed = 7  # the seed
modes = ["content", "title"]  # modes
[base.narrative]
seed = 42
[base.narrative.collections.news]
n_pairs = 60  # pairs
subset = "none"
[class]
inherits = "base"
[class.sage]
per_category = { canonical = 1, pulp = 1, llm = 1 }
[class.narrative.collections.news]
n_pairs = 10
[loop_a]
inherits = "loop_b"
[loop_b]
inherits = "loop_a"
"""


@pytest.fixture
def custom(tmp_path):
    path = tmp_path / "profiles.toml"
    path.write_text(CUSTOM)
    return path


def test_a_custom_profile_inherits_and_changes_only_what_it_names(custom):
    assert profiles.names(custom) == ("base", "class", "loop_a", "loop_b")
    sage, sources = profiles.resolved("sage", "class", custom)
    assert sage == {"per_category": {"canonical": 1, "pulp": 1, "llm": 1}, "seed": 7, "modes": ("content", "title")}
    assert sources["per_category.canonical"] == "class" and sources["seed"] == "base"
    narr = profiles.knobs("narrative", "class", custom)
    assert narr["collections"]["news"] == {"n_pairs": 10, "subset": None}   # tables merge key by key
    assert narr["seed"] == 42
    shown = profiles.show("class", custom)
    assert "  seed = 7    (profile base)" in shown and "  collections.news.n_pairs = 10    (profile class)" in shown
    # an inline table overridden in the child is the child's, not the parent's
    assert "  per_category = canonical=1; pulp=1; llm=1    (profile class)" in shown


def test_an_inline_table_changed_in_part_names_each_parts_profile(tmp_path):
    path = tmp_path / "profiles.toml"
    path.write_text(CUSTOM.replace("per_category = { canonical = 1, pulp = 1, llm = 1 }", "per_category = { pulp = 0 }"))
    s = config.resolve("class", path=path).setting("sage.per_category")
    assert s.value == {"canonical": 2, "pulp": 0, "llm": 2}
    assert s.source == "profile base: canonical, llm; class: pulp"


def test_unknown_and_circular_profiles_are_clear_errors(custom):
    with pytest.raises(profiles.ProfileError, match=r"unknown PROFILE 'nightly'; choose one of base, class"):
        profiles.knobs("sage", "nightly", custom)
    with pytest.raises(profiles.ProfileError, match="inherits in a circle"):
        profiles.knobs("sage", "loop_a", custom)
    with pytest.raises(profiles.ProfileError, match=r"no \[base.claims\] table"):
        profiles.knobs("claims", "base", custom)


def test_a_malformed_file_names_itself(tmp_path):
    bad = tmp_path / "broken.toml"
    bad.write_text("[demo\n")
    with pytest.raises(profiles.ProfileError, match="broken.toml"):
        profiles.load(bad)


# ---------------------------------------------------------------- environment


def _sources() -> list[Path]:
    return [*sorted((ROOT / "lib").rglob("*.py")), *sorted((ROOT / "notebooks").glob("*.py")), ROOT / "Makefile"]


def test_every_judgelab_variable_the_code_names_is_declared():
    named = {m for f in _sources() for m in re.findall(r"JUDGELAB_[A-Z][A-Z_]*[A-Z]", f.read_text())}
    # the per-study judge variables are built from the study's name (judgelab.study_models)
    named |= {f"JUDGELAB_{s.upper()}_{what}" for s in PAPER_JUDGES for what in ("MODEL", "REASONING_EFFORT")}
    declared = settings_file.declared()
    assert named - set(declared) == set()
    for var, spec in declared.items():
        assert {"key", "type", "meaning"} <= set(spec), var


#: the one place: the module that touches os.environ, and the resolvers that ask it
_ENV_TOUCHERS = {"judgelab/settings_file.py"}
_ENV_READERS = {"judgelab/settings_file.py", "judgelab/config.py", "judgelab/gateway/settings.py"}


def environment_reads(path: Path, name: str) -> list[str]:
    """``name:line what`` for each place ``path`` touches ``os.environ``/``os.getenv`` (allowed in
    :data:`_ENV_TOUCHERS` only) or reads a variable through ``settings_file.env``/``environment``
    (allowed in :data:`_ENV_READERS` only: every other module asks the resolvers)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        what = None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr in ("environ", "getenv", "putenv", "unsetenv", "environb"):
            what = f"os.{node.attr}" if name not in _ENV_TOUCHERS else None
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and \
                {a.name for a in node.names} & {"environ", "getenv", "putenv", "environb"}:
            what = "from os import environ/getenv" if name not in _ENV_TOUCHERS else None
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "settings_file" \
                and node.attr in ("env", "environment"):
            what = f"settings_file.{node.attr}" if name not in _ENV_READERS else None
        elif isinstance(node, ast.ImportFrom) and (node.module or "").endswith("settings_file") and \
                {a.name for a in node.names} & {"env", "environment"}:
            what = "from settings_file import env" if name not in _ENV_READERS else None
        if what:
            found.append(f"{name}:{node.lineno} {what}")
    return found


def test_no_module_reads_the_environment_outside_the_one_place(tmp_path, monkeypatch):
    """settings_file alone touches os.environ; config and gateway.settings alone read variables
    through it; every other module asks them (config.variable / path_setting, gateway.settings.variable).
    Tried: a planted ``settings_file.env("DATA_MIRROR")`` in paths.py fails here."""
    lib = ROOT / "lib"
    offenders = [hit for f in sorted(lib.rglob("*.py")) for hit in environment_reads(f, f.relative_to(lib).as_posix())]
    assert offenders == []
    planted = tmp_path / "planted.py"  # the scan sees each way of reading
    planted.write_text("import os\nfrom os import getenv\nfrom judgelab import settings_file\n"
                       "from judgelab.settings_file import env\na = os.environ.get('X')\nb = os.getenv('X')\n"
                       "c = settings_file.env('DATA_MIRROR')\nos.environ['X'] = '1'\n")
    assert len(environment_reads(planted, "judgelab/paths.py")) == 6
    assert environment_reads(planted, "judgelab/settings_file.py") == []
    monkeypatch.setenv("JUDGELAB_NOT_DECLARED", "1")
    with pytest.raises(settings_file.ProfileError, match="JUDGELAB_NOT_DECLARED is not declared"):
        settings_file.env("JUDGELAB_NOT_DECLARED")
    monkeypatch.setenv("JUDGELAB_MODEL", "  gpt-4.1 ")
    assert settings_file.env("JUDGELAB_MODEL") == "gpt-4.1"
    monkeypatch.setenv("JUDGELAB_MODEL", "   ")
    assert settings_file.env("JUDGELAB_MODEL") is None


#: the resolvers: the only library modules that turn a profile's name or a variable's name into a
#: setting (``profiles.knobs`` by name, ``config.variable``, ``gateway.settings.variable``); every
#: other module is handed the run's resolved Config (or one value of it) by its caller
_RESOLVERS = {
    "judgelab/config.py": "resolves the run's configuration",
    "judgelab/gateway/settings.py": "resolves the gateway's settings (config.resolve calls it with the run's environ)",
    "judgelab/profiles.py": "the settings file's reader (knobs by name is its API for notebooks and the console)",
    "judgelab/study_models.py": "resolves each study's judge (config.resolve calls it with the run's environ)",
    "judgelab/gateway/redact.py": "the API keys to mask: a key is never part of a Config, so it is read where it is masked",
    "judgelab/gateway/canary.py": "the canary's fallback for a gateway built without a Config (config.resolve passes the resolved value)",
    "judgelab/gateway/backends/llamacpp.py": "llama.cpp's thread count, a property of the process the engine runs in",
    "judgelab/gateway/progress.py": "whether progress bars redraw: a property of the terminal or kernel, not of the run",
    "judgelab/site/screenshots.py": "the browser `make screenshots` drives: a tool's setting, not a run's",
}
_BY_NAME = {"judgelab.profiles": {"knobs"}, "judgelab.config": {"variable"}, "judgelab.gateway.settings": {"variable"}}


def by_name_reads(path: Path, name: str) -> list[str]:
    """``name:line what`` for each call in ``path`` that reads a setting by name at call time:
    ``profiles.knobs(...)``, ``config.variable(...)``, ``gateway.settings.variable(...)``, under
    any alias (``from judgelab import profiles as p``, ``from judgelab.config import variable``)."""
    if name in _RESOLVERS:
        return []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: dict[str, str] = {}      # local name -> module (import judgelab.config as c; from judgelab import config)
    functions: dict[str, str] = {}    # local name -> "module.function" (from judgelab.config import variable)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in _BY_NAME:
                    modules[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in _BY_NAME:
                    modules[a.asname or a.name] = full
                elif node.module in _BY_NAME and a.name in _BY_NAME[node.module]:
                    functions[a.asname or a.name] = full
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute):
            base = f.value
            dotted = base.id if isinstance(base, ast.Name) else (
                f"{base.value.id}.{base.attr}" if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) else None)
            module = modules.get(dotted) or (dotted if dotted in _BY_NAME else None)
            if dotted == "gateway.settings" and "gateway" in modules.values() | {"gateway"}:
                module = "judgelab.gateway.settings"
            if module and f.attr in _BY_NAME.get(module, ()):
                found.append(f"{name}:{node.lineno} {module}.{f.attr}")
        elif isinstance(f, ast.Name) and f.id in functions:
            found.append(f"{name}:{node.lineno} {functions[f.id]}")
    return found


def test_library_reads_the_resolved_configuration_not_settings_by_name(tmp_path):
    """Outside the resolvers, no library module reads a profile's knobs or a variable by name at
    call time: it is handed the run's Config (a notebook's ``run.config``, ``make estimate``'s, a
    benchmark's). Tried: a planted ``profiles.knobs("narrative", profile)`` in narrative/settings.py
    fails here."""
    lib = ROOT / "lib"
    offenders = [hit for f in sorted(lib.rglob("*.py")) for hit in by_name_reads(f, f.relative_to(lib).as_posix())]
    assert offenders == []
    planted = tmp_path / "planted.py"  # the scan sees each spelling
    planted.write_text("from judgelab import profiles, config as c\nimport judgelab.profiles as jp\n"
                       "from judgelab.gateway import settings\nfrom judgelab.config import variable as v\n"
                       "a = profiles.knobs('sage', 'demo')\nb = c.variable('DATA_MIRROR')\nd = jp.knobs('sage', 'demo')\n"
                       "e = settings.variable('JUDGELAB_MODEL')\nf = v('JUDGELAB_MODEL')\n"
                       "ok = c.of('demo').knobs('sage'), c.variables()\n")
    assert len(by_name_reads(planted, "judgelab/narrative/settings.py")) == 5
    assert by_name_reads(planted, "judgelab/config.py") == []


def test_library_takes_the_embedding_endpoint_and_the_record_from_the_configuration(monkeypatch):
    """The process's environment reaches an embedding client and the run record only through the
    resolved configuration: another ``environ`` given to :func:`config.resolve` wins over it."""
    from judgelab import embeddings, runrecord
    from judgelab.narrative.settings import landscape_settings

    monkeypatch.setenv("OPENAI_BASE_URL", "http://process.invalid/v1")
    monkeypatch.delenv("JUDGELAB_BASE_URL", raising=False)
    monkeypatch.delenv("JUDGELAB_BACKEND", raising=False)
    assert embeddings.OpenAIEmbeddings(api_key="k").base_url is None   # OpenAI's own, not the variable
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "JUDGELAB_BACKEND": "openai"}
    cfg = config.resolve("smoke", environ=env)
    assert cfg.embeddings["base_url"] == config.Setting("http://127.0.0.1:9/v1", "environment OPENAI_BASE_URL")
    settings = landscape_settings(cfg)
    assert settings.embedding_url == "http://127.0.0.1:9/v1"
    seen = {}

    class Backend:
        name = "fake"

        def embed(self, texts):
            return [[0.0]] * len(texts)

    monkeypatch.setattr(embeddings, "make_backend", lambda kind, **kw: seen.update(kind=kind, **kw) or Backend())
    col = dataclasses.make_dataclass("Col", ["docs", "embeddings", "embedding_source"])(
        __import__("pandas").DataFrame({"text": ["a", "b"]}), None, None)
    embeddings.embed_collection(col, "openai", openai_url=settings.embedding_url)
    assert seen == {"kind": "openai", "base_url": "http://127.0.0.1:9/v1"}
    record = runrecord.judge_settings(cfg)
    assert (record["JUDGELAB_BACKEND"], record["JUDGELAB_MODEL"], record["base_url_host"]) == ("openai", None, "127.0.0.1:9")
    assert runrecord.judge_settings(config.resolve("smoke", environ={}))["JUDGELAB_BACKEND"] is None


def test_show_says_where_each_setting_came_from(monkeypatch):
    monkeypatch.setenv("JUDGELAB_MODEL", "gpt-4.1")
    monkeypatch.setenv("JUDGELAB_API_KEY", "a-secret-key-value")
    monkeypatch.setenv("JUDGELAB_BASE_URL", "http://127.0.0.1:8080/v1")
    shown = profiles.show("demo")
    assert "  per_category = canonical=2; pulp=2; llm=2    (profile demo)" in shown
    sage = shown.split("[judges.sage]")[1].split("[judges.narrative]")[0]
    # a base URL chooses openai-compatible; its key comes from JUDGELAB_API_KEY, shown by name only
    assert "  backend = openai-compatible    (default (a base URL chooses openai-compatible))" in sage
    assert "  model = gpt-4.1    (environment JUDGELAB_MODEL)" in sage
    assert "  key_variable = JUDGELAB_API_KEY" in sage
    # the paper's effort is shown, and that this judge is sent none (not a reasoning model on OpenAI)
    assert "  reasoning_effort = medium    (the SAGE paper" in sage
    assert "not sent: openai-compatible model gpt-4.1 takes no reasoning effort)" in sage
    assert "  concurrency = 8    (default)" in shown.split("[gateway]")[1]
    assert "a-secret-key-value" not in shown


# ---------------------------------------------------------------- the resolved configuration


def test_each_studys_judge_resolves_from_paper_environment_or_parameter():
    env = {"JUDGELAB_BACKEND": "openai", "OPENAI_API_KEY": "sk-never-shown", "JUDGELAB_NARRATIVE_MODEL": "gpt-4o",
           "JUDGELAB_SAGE_REASONING_EFFORT": "low"}
    cfg = config.resolve("paper", environ=env)
    sage, narr, hol = (cfg.judges[s] for s in ("sage", "narrative", "holistic"))
    assert (sage.model.value, sage.model.source) == ("gpt-5-mini", PAPER_JUDGES["sage"].source)
    assert (sage.reasoning_effort.value, sage.reasoning_effort.source) == ("low", "environment JUDGELAB_SAGE_REASONING_EFFORT")
    assert (narr.model.value, narr.model.source) == ("gpt-4o", "environment JUDGELAB_NARRATIVE_MODEL")
    assert (hol.model.value, hol.backend.source) == ("gpt-4.1", "environment JUDGELAB_BACKEND")
    assert {j.key_variable for j in (sage, narr, hol)} == {"OPENAI_API_KEY"}
    assert "sk-never-shown" not in cfg.show() and "sk-never-shown" not in repr(cfg)
    # a notebook's MODEL wins over the environment, for every study of that run
    cfg = config.resolve("paper", "09", {"MODEL": "gpt-4.1-mini"}, environ=env)
    assert (cfg.judges["narrative"].model.value, cfg.judges["narrative"].model.source) == ("gpt-4.1-mini", "parameter MODEL")
    # the embedded default needs no key
    local = config.resolve("demo", environ={})
    assert local.judges["sage"].backend.value == "llamacpp" and local.judges["sage"].key_variable is None


def test_a_notebook_parameter_overrides_its_knob_and_none_keeps_the_profiles():
    base = config.resolve("demo", "05", {"CONVERGENCE_THRESHOLD": None, "PROFILE": "demo"}, environ={})
    assert base.setting("sage.convergence_threshold") == config.Setting(0.3, "profile demo")
    assert base.parameters == {"PROFILE": "demo"}
    # papermill's -p passes text: read as the knob's type
    cfg = config.resolve("demo", "05", {"CONVERGENCE_THRESHOLD": "0.1"}, environ={})
    assert cfg.setting("sage.convergence_threshold") == config.Setting(0.1, "parameter CONVERGENCE_THRESHOLD")
    assert cfg.parameters == {"CONVERGENCE_THRESHOLD": "0.1"}
    assert config.resolve("demo", "02", {"MODES": "content"}, environ={})["sage.modes"] == ("content",)
    assert config.resolve("demo", "08", {"N_PAIRS": 5}, environ={}).knobs("narrative")["collections"]["news"]["n_pairs"] == 5
    # the library's knob readers take the resolved configuration too (notebooks 09, 10 and 13)
    cfg = config.resolve("demo", "09", {"MODES": "simple,cot", "EXPLANATIONS": "on"}, environ={})
    from judgelab.narrative.settings import judge_knobs
    assert (judge_knobs(cfg)["modes"], judge_knobs(cfg)["explanations"]) == (("simple", "cot"), True)
    assert profiles.knobs("claims", config.resolve("demo", "13", {"POWER_SIMULATIONS": 40}, environ={}))["power_simulations"] == 40
    seeds = config.resolve("demo", "07", {"SEED": "7"}, environ={})
    assert seeds.setting("narrative.seed") == config.Setting(7, "parameter SEED")
    with pytest.raises(settings_file.ProfileError, match=r'profiles.toml: notebook 05\'s parameter SEED is not declared'):
        config.resolve("demo", "05", {"SEED": 7}, environ={})


def test_the_configuration_is_frozen():
    cfg = config.resolve("demo", environ={})
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.profile = "paper"
    with pytest.raises(TypeError):
        cfg.settings["sage.seed"] = config.Setting(1, "me")
    knobs = cfg.knobs("sage")
    knobs["seed"] = 99  # a copy: the configuration is unchanged
    assert cfg["sage.seed"] == 7
    assert all(f.__doc__ or f.name for f in dataclasses.fields(cfg))


def test_every_notebook_parameter_is_declared_and_none_means_the_profiles():
    """Each notebook's parameters cell and the settings file's [parameters] name the same
    parameters; every parameter but PROFILE defaults to None in the notebook (no second default:
    None is the profile's value, the environment's judge, or everything)."""
    for nb in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")):
        cell = nb.read_text().split('# %% tags=["parameters"]', 1)[1].split("\n# %%", 1)[0]
        defaults = {t.id: n.value for n in ast.parse(cell).body if isinstance(n, ast.Assign) for t in n.targets}
        declared = config.declared_parameters(nb.stem[:2])
        assert set(defaults) == set(declared), nb.name
        body = ast.parse(nb.read_text().split('# %% tags=["parameters"]', 1)[1].split("\n# %%", 1)[1])
        loads = {n.id for n in ast.walk(body) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        assert "Run.open(" in ast.unparse(body) and "params=globals()" in ast.unparse(body), nb.name
        # a knob's parameter, a judge's and the cache mode act through run.config (tests above); the
        # others (a scope, a selection) are read by the notebook's own code
        assert {k for k, v in declared.items() if v.get("reads") in ("scope", "selection")} <= loads, nb.name
        assert {v.get("reads") for v in declared.values()} <= {None, "profile", "judge", "gateway", "scope", "selection"}
        assert all(isinstance(v, ast.Constant) and v.value is None for k, v in defaults.items() if k != "PROFILE"), nb.name
        for name, spec in declared.items():
            assert ("knob" in spec) != ("reads" in spec) and spec.get("meaning"), (nb.name, name)
            if "knob" in spec:
                assert isinstance(defaults[name], ast.Constant) and defaults[name].value is None, (nb.name, name)
                assert config.resolve("demo", nb.stem[:2], {name: None}, environ={})  # the knob exists


def test_show_on_the_command_line():
    run = subprocess.run([sys.executable, "-m", "judgelab.profiles", "show", "nightly"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2 and "unknown PROFILE 'nightly'" in run.stderr


def test_docs_settings_md_is_up_to_date():
    text = (ROOT / "docs" / "settings.md").read_text()
    assert text == profiles.docs(), "docs/settings.md is stale: run python -m judgelab.profiles docs"
    assert "| `sage.per_category` | canonical=1; pulp=0; llm=0 | canonical=2; pulp=2; llm=2 |" in text
    assert "| `JUDGELAB_BACKEND` | `gateway.backend` |" in text
    every_knob = [line for line in text.splitlines() if line.startswith("| `") and "." in line.split("`")[1]]
    assert all(not line.rstrip().endswith("|  |") for line in every_knob), "a knob without a comment"


def test_notebook_12_reads_the_summaries_of_every_profiles_planted_layer():
    # the pipeline's dependencies are static (notebook_files.READS): a profile that planted into
    # another layer would read a file notebook 12 is not declared to wait for
    from judgelab.notebook_files import READS

    for name in profiles.PROFILES:
        layer = profiles.knobs("behaviour", name)["planted_layer"]
        assert f"sage_summary_{layer}" in READS["12"], (name, layer)


# ---------------------------------------------------------------- every knob acts


def _knob_reads(path: Path) -> tuple[set[str], set[str]]:
    """(names read from a knobs dict: ``x["name"]``, ``x.get("name")``, the fields of a dataclass
    built by ``from_settings(knobs)``; every string constant) of one source file."""
    tree, reads, literals = ast.parse(path.read_text()), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            reads.add(node.slice.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
              and node.func.attr in ("get", "pop", "setdefault") and isinstance(node.args[0], ast.Constant)):
            reads.add(node.args[0].value)
        elif isinstance(node, ast.ClassDef) and any(isinstance(f, ast.FunctionDef) and f.name == "from_settings"
                                                    for f in node.body):
            reads |= {f.target.id for f in node.body if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name)}
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            literals.add(node.value)
    return reads, literals


#: the modules that hold and print the settings, not the ones that use them
_SETTINGS_MODULES = {"config.py", "profiles.py", "settings_file.py"}


def unread_knobs(root: Path = ROOT) -> list[str]:
    """The knobs of any profile that no notebook reads: a knob ``study.name`` is read when a
    notebook's code (the notebook and the library files it reaches, judgelab.pipeline) names the
    study and reads ``name`` from a knobs dict, or anywhere reads the full key ``"study.name"``
    from the resolved configuration."""
    from judgelab import pipeline

    index, parsed = pipeline._current_index(), {}
    reach = []
    for nb in sorted((root / "notebooks").glob("[0-9][0-9]_*.py")):
        files = [nb] + [f for f in pipeline.lib_files(nb, index) if f.suffix == ".py" and f.name not in _SETTINGS_MODULES]
        reads, literals = set(), set()
        for f in files:
            r, lit = parsed.setdefault(f, _knob_reads(f))
            reads, literals = reads | r, literals | lit
        reach.append((reads, literals))
    keys = {re.sub(r"collections\.\w+\.", "collections.*.", k)
            for p in profiles.names() for k in config.resolve(p, environ={}).settings}
    unread = []
    for key in sorted(keys):
        study, _, rest = key.partition(".")
        name = rest.rsplit(".", 1)[-1]
        if not any((study in lit and name in reads) or key in lit for reads, lit in reach):
            unread.append(key)
    return unread


def test_every_knob_is_read_by_a_notebooks_code():
    """A knob no code reads would show in `profiles show` and change nothing: the test fails on it
    (tried: notebook 05 back on its own CONVERGENCE_THRESHOLD = 0.3 leaves sage.convergence_threshold unread)."""
    assert unread_knobs() == []


def test_a_custom_convergence_threshold_changes_table_8(tmp_path):
    """The settings file's sage.convergence_threshold, resolved as notebook 05 resolves it, changes
    Table 8's convergence row; the agreement threshold its agreement row."""
    from judgelab.sage.analysis import paper_tables

    path = tmp_path / "profiles.toml"
    path.write_text(settings_file.FILE.read_text() + '\n[mine]\ninherits = "demo"\n[mine.sage]\nconvergence_threshold = 0.15\nagreement_threshold = 0.1\n')
    from sage_synthetic import evaluation_records, rows_from_records

    rows = rows_from_records(evaluation_records("s1", "L4", "content", {4: [3.0] * 4, 5: [3.0, 3.2, 3.2, 3.4]},
                                                validator_blind=[3.0] * 4))
    summary = None

    def table8(profile):
        cfg = config.resolve(profile, "05", {"PROFILE": profile}, environ={}, path=path)
        return paper_tables.table08_reliability(rows, summary, convergence_threshold=cfg["sage.convergence_threshold"],
                                                agreement_threshold=cfg["sage.agreement_threshold"], n_boot=20, seed=0)

    demo, mine = table8("demo"), table8("mine")
    conv = [t.set_index("metric").loc["convergence_rate"] for t in (demo, mine)]
    assert "< 0.3" in conv[0]["definition"] and "< 0.15" in conv[1]["definition"]
    # by hand: |R5 - R4| of the toy rows is 0.0, 0.2, 0.2, 0.4 -> 3 of 4 below 0.3, 1 of 4 below 0.15
    assert [conv[0]["value"], conv[1]["value"]] == pytest.approx([0.75, 0.25])
    # the validator differs from R5 by the same 0.0, 0.2, 0.2, 0.4: 4 of 4 below 0.5, 1 of 4 below 0.1
    agree = [t.set_index(["metric", "track"]).loc[("peer_agreement", "validator_blind"), "value"] for t in (demo, mine)]
    assert agree == pytest.approx([1.0, 0.25])


def test_a_study_gateway_is_built_from_the_resolved_configuration_not_the_environment(tmp_path, monkeypatch):
    """open_gateway(study, config=...) takes backend, model, endpoint and cache mode from the run's
    configuration; a variable set in the process after it was resolved changes nothing."""
    from judgelab.study_models import open_gateway

    env = {"JUDGELAB_BASE_URL": "http://127.0.0.1:9/v1", "JUDGELAB_NARRATIVE_MODEL": "judge-m"}
    cfg = config.resolve("smoke", "09", {"CACHE_MODE": "replay"}, environ=env)
    monkeypatch.setenv("JUDGELAB_NARRATIVE_MODEL", "another-model")
    monkeypatch.setenv("JUDGELAB_CACHE_MODE", "refresh")
    gw = open_gateway("narrative", config=cfg, cache_path=tmp_path / "c.sqlite", transcripts=False)
    assert (gw.backend_name, gw.model_name, gw.cache_mode, gw.study) == ("openai-compatible", "judge-m", "replay", "narrative")
    with pytest.raises(TypeError, match="not both"):
        open_gateway("narrative", model="x", config=cfg)
