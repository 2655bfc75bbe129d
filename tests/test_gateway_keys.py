"""Keys only where they belong: ``OPENAI_API_KEY`` goes only to OpenAI's own URL; any
other endpoint gets ``JUDGELAB_API_KEY`` or no key. The fake server records the ``Authorization``
header of every request it receives, so each test reads what the host was actually sent."""
from __future__ import annotations

import openai
import pytest
from pydantic import BaseModel

from judgelab.gateway import ChatRequest, ConfigError, Gateway, Message
from judgelab.gateway.backends.openai_backend import OpenAIBackend
from fake_openai_server import FakeChatServer, Fault
from judgelab.gateway.settings import api_key_for, is_openai_url

OPENAI_KEY = "sk-openai-key-that-must-stay-home-0123456789"
OTHER_KEY = "sk-third-party-key-0123456789abcdef"


class Label(BaseModel):
    label: str


def req(i) -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=f"item {i}")], schema=Label, tags={"item": i})


@pytest.fixture
def keys_env(monkeypatch):
    for var in ("OPENAI_API_KEY", "JUDGELAB_API_KEY", "OPENAI_BASE_URL", "JUDGELAB_BASE_URL", "JUDGELAB_BACKEND",
                "JUDGELAB_MODEL", "JUDGELAB_BATCH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    return monkeypatch


@pytest.mark.parametrize("url,own", [
    ("https://api.openai.com/v1", True),
    ("https://api.openai.com/v1/", True),
    ("https://eu.api.openai.com/v1", True),
    ("http://api.openai.com/v1", False),                 # not over https
    ("https://api.openai.com.example.net/v1", False),    # a lookalike host
    ("https://notapi.openai.com/v1", False),
    ("http://127.0.0.1:8000/v1", False),
    ("https://openrouter.ai/api/v1", False),
])
def test_only_openais_own_url_is_openai(url, own):
    assert is_openai_url(url) is own


def test_the_key_variable_follows_the_url(keys_env):
    keys_env.setenv("JUDGELAB_API_KEY", OTHER_KEY)
    assert api_key_for(None) == (OPENAI_KEY, "OPENAI_API_KEY")
    assert api_key_for("https://api.openai.com/v1") == (OPENAI_KEY, "OPENAI_API_KEY")
    assert api_key_for("http://127.0.0.1:8000/v1") == (OTHER_KEY, "JUDGELAB_API_KEY")
    keys_env.delenv("JUDGELAB_API_KEY")
    assert api_key_for("http://127.0.0.1:8000/v1") == (None, "JUDGELAB_API_KEY")


def test_openai_itself_gets_the_openai_key(keys_env):
    be = OpenAIBackend("gpt-4.1")  # the default URL; the client is built but nothing is sent
    assert be.base_url == "https://api.openai.com/v1" and be.api_key == OPENAI_KEY
    assert be.client.auth_headers == {"Authorization": f"Bearer {OPENAI_KEY}"}


def test_a_compatible_server_never_sees_the_openai_key(keys_env, tmp_path):
    with FakeChatServer() as srv:
        keys_env.setenv("JUDGELAB_BASE_URL", srv.base_url)  # as the README's vLLM/Ollama block sets it
        gw = Gateway.from_settings(model="fake-model", cache_path=tmp_path / "a.sqlite", progress=False)
        assert gw.backend_name == "openai-compatible" and gw.chat(req(1)).ok
        assert srv.authorizations and all(OPENAI_KEY not in (a or "") for a in srv.authorizations)
        assert set(srv.authorizations) == {"Bearer no-key"}  # the client's placeholder, no secret
        # its own key, when it needs one
        keys_env.setenv("JUDGELAB_API_KEY", OTHER_KEY)
        srv.authorizations.clear()
        gw = Gateway.from_settings(model="fake-model", cache_path=tmp_path / "b.sqlite", progress=False)
        assert gw.chat(req(1)).ok and set(srv.authorizations) == {f"Bearer {OTHER_KEY}"}


def test_the_openai_backend_at_another_url_needs_that_urls_key(keys_env, tmp_path):
    with FakeChatServer() as srv:
        with pytest.raises(ConfigError, match=r"JUDGELAB_API_KEY.*OPENAI_API_KEY is sent only to https://api.openai.com"):
            Gateway.from_settings(backend="openai", model="gpt-4.1", base_url=srv.base_url, cache_path=tmp_path / "c.sqlite")
        keys_env.setenv("JUDGELAB_API_KEY", OTHER_KEY)
        gw = Gateway.from_settings(backend="openai", model="gpt-4.1", base_url=srv.base_url, cache_path=tmp_path / "c.sqlite",
                                   progress=False)
        assert gw.chat(req(1)).ok
        assert set(srv.authorizations) == {f"Bearer {OTHER_KEY}"}


def test_a_401_from_a_keyless_server_says_which_key_was_sent(keys_env, tmp_path):
    with FakeChatServer(default=Fault.status(401, "missing bearer token")) as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False)
        res = gw.chat(req(1))
    assert res.status == "failed" and "HTTP 401" in res.error and gw.base_url in res.error
    assert "no key (JUDGELAB_API_KEY is unset" in res.error and OPENAI_KEY not in res.error


def test_batch_uploads_go_with_the_same_key_rule(keys_env, tmp_path):
    with FakeChatServer() as srv:
        gw = Gateway.from_settings(backend="openai-compatible", model="fake-model", base_url=srv.base_url,
                                   cache_path=tmp_path / "c.sqlite", progress=False, batch=True, batch_poll_s=0.01)
        assert gw.run_batch([req(i) for i in range(2)])[0].ok
        assert srv.count("/v1/files") == 1 and set(srv.authorizations) == {"Bearer no-key"}


def test_the_openai_embeddings_follow_the_same_rule(keys_env, tmp_path):
    from judgelab.embeddings import EmbeddingCache, OpenAIEmbeddings

    with FakeChatServer() as srv:  # it has no /v1/embeddings (404), but it records what it was sent
        emb = OpenAIEmbeddings(base_url=srv.base_url, cache=EmbeddingCache(tmp_path / "e.sqlite"), max_retries=0)
        with pytest.raises(openai.NotFoundError):
            emb.embed(["a text"])
        assert srv.authorizations == ["Bearer no-key"]
    assert OpenAIEmbeddings(cache=EmbeddingCache(tmp_path / "f.sqlite")).api_key == OPENAI_KEY  # OpenAI's own URL


# ---------------------------------------------------------------- organisation and project headers

ORG, PROJECT = "org-must-stay-home-0123", "proj_must_stay_home_4567"


def test_account_headers_go_only_with_the_openai_key_to_openai(keys_env, tmp_path):
    """``OPENAI_ORG_ID``/``OPENAI_PROJECT_ID``, which the client reads by itself, name an OpenAI
    account: a local server, a proxy given JUDGELAB_API_KEY and an http lookalike get neither."""
    keys_env.setenv("OPENAI_ORG_ID", ORG)
    keys_env.setenv("OPENAI_PROJECT_ID", PROJECT)
    keys_env.setenv("JUDGELAB_API_KEY", OTHER_KEY)
    home = OpenAIBackend("gpt-4.1").client.default_headers
    assert home["OpenAI-Organization"] == ORG and home["OpenAI-Project"] == PROJECT
    with FakeChatServer() as srv:
        for backend, model in (("openai-compatible", "fake-model"), ("openai", "gpt-4.1")):
            gw = Gateway.from_settings(backend=backend, model=model, base_url=srv.base_url, progress=False,
                                       cache_path=tmp_path / f"{backend}.sqlite", canary=False)
            assert gw.chat(req(backend)).ok
        assert len(srv.account_headers) == 2 and set(srv.account_headers) == {(None, None)}
        assert set(srv.authorizations) == {f"Bearer {OTHER_KEY}"}


def test_embeddings_follow_the_same_rule_for_account_headers(keys_env):
    from judgelab.embeddings import OpenAIEmbeddings

    keys_env.setenv("OPENAI_ORG_ID", ORG)
    local = OpenAIEmbeddings(base_url="http://127.0.0.1:9/v1")._get_client().default_headers
    assert "OpenAI-Organization" not in {k for k, v in local.items() if isinstance(v, str)}
    home = OpenAIEmbeddings(api_key=OPENAI_KEY)._get_client().default_headers
    assert home["OpenAI-Organization"] == ORG
