"""Shared prompt prefixes kept across processes: llama.cpp KV states saved on disk.

llama.cpp keeps only the last prompt's KV cache, in memory, and notebooks 02-04 each judge one SAGE
layer in their own process, so a story (~2,600 tokens on the demo) would be prefilled again in
each; loading its saved state takes tens of milliseconds for ~60 MB instead of seconds.

:meth:`PrefixStates.before` sees each prompt: when it leaves what the KV cache holds, the ``k``
tokens they share (in SAGE, system + story + task) are saved if at least ``min_tokens`` long and
``min_new`` beyond the longest stored prefix, so a story is stored once; a stored state is loaded
when it beats the KV cache by ``min_gain`` tokens. Only sequence 0's cells are saved (no logits,
~23 KB per token for SmolLM2-135M), per model file and context size. At ``max_bytes`` nothing
more is saved (first in stays: the layers visit the stories in the same order); a state that
does not load is deleted. A restored prefix equals the stored one; a prefill in another batch
split can differ in the last bits, as with llama.cpp's own reuse.
"""
from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

SEQ = 0  # llama-cpp-python evaluates every prompt in sequence 0


def common_prefix_len(a, b) -> int:
    """Length of the longest common prefix of two token sequences (lists or arrays). Vectorised:
    it runs before every value slot, on prompts of thousands of tokens."""
    n = min(len(a), len(b))
    differ = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(differ[0]) if len(differ) else n


@dataclass(frozen=True)
class StoredPrefix:
    ids: np.ndarray  # int32 token ids
    path: Path

    @property
    def nbytes(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0


class PrefixStates:
    """Disk store of KV states of shared prompt prefixes for one model (see the module docstring)."""

    def __init__(self, directory: str | Path, min_tokens: int = 512, min_new: int = 768,
                 min_gain: int = 64, max_bytes: int = 1024**3):
        self.dir = Path(directory)
        self.min_tokens, self.min_new, self.min_gain, self.max_bytes = min_tokens, min_new, min_gain, max_bytes
        self.saved = self.loaded = 0  # counts, for the benchmark and the tests
        self._lock = threading.Lock()
        self._ids: dict[str, np.ndarray] = {}  # file name -> token ids (a file never changes)

    # -- the store --------------------------------------------------------------------------------
    def entries(self) -> list[StoredPrefix]:
        """Every state on disk (listed afresh: other processes may have added some)."""
        out = []
        for ids_file in sorted(self.dir.glob("*.ids.npy")):
            kv = ids_file.with_name(ids_file.name.replace(".ids.npy", ".kv"))
            if not kv.is_file():
                continue
            if ids_file.name not in self._ids:
                try:
                    self._ids[ids_file.name] = np.load(ids_file)
                except (OSError, ValueError) as exc:
                    log.warning("ignoring unreadable prefix state %s: %s", ids_file, exc)
                    continue
            out.append(StoredPrefix(self._ids[ids_file.name], kv))
        return out

    def best(self, ids) -> tuple[StoredPrefix | None, int]:
        """The stored prefix sharing the most leading tokens with ``ids``, and that count."""
        found, shared = None, 0
        ids = np.asarray(ids, dtype=np.int32)
        for e in self.entries():
            n = common_prefix_len(e.ids, ids)
            if n > shared:
                found, shared = e, n
        return found, shared

    def total_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.dir.glob("*.kv")) if self.dir.is_dir() else 0

    # -- the hook ---------------------------------------------------------------------------------
    def before(self, llama, ids: list[int]) -> None:
        """Called with the lock held, before ``ids`` is evaluated: save the prefix the KV cache is
        about to lose part of, if it qualifies; load a stored one if it saves ``min_gain`` tokens."""
        with self._lock:
            k = common_prefix_len(llama._input_ids, ids)
            if self.min_tokens <= k < llama.n_tokens:
                self._maybe_save(llama, ids[:k])
            entry, shared = self.best(ids)
            # the prompt's last token is always evaluated again (its logits are needed)
            if entry is not None and min(shared, len(ids) - 1) >= k + self.min_gain:
                self._load(llama, entry)

    def _maybe_save(self, llama, prefix: list[int]) -> None:
        _, stored = self.best(prefix)
        if len(prefix) - stored < self.min_new:
            return
        size = self.total_bytes()
        if size >= self.max_bytes:
            log.info("prefix state store full (%d MB >= %d MB): not saving", size >> 20, self.max_bytes >> 20)
            return
        # drop what follows the prefix (Llama.generate would drop it anyway), then save the rest
        llama._ctx.kv_cache_seq_rm(-1, len(prefix), -1)
        llama.n_tokens = len(prefix)
        self._write(llama, prefix)

    def _write(self, llama, prefix: list[int]) -> None:
        import llama_cpp

        ctx = llama._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, SEQ)
        buf = (ctypes.c_uint8 * size)()
        n = llama_cpp.llama_state_seq_get_data(ctx, buf, size, SEQ)
        if not n:
            log.warning("llama.cpp returned an empty state for a %d-token prefix: not saved", len(prefix))
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha1(np.asarray(prefix, dtype=np.int32).tobytes()).hexdigest()[:20]
        kv, ids_file = self.dir / f"{name}.kv", self.dir / f"{name}.ids.npy"
        tmp = kv.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(memoryview(buf)[:n])
        os.replace(tmp, kv)  # the state first, the ids last: an entry is listed only when whole
        tmp_ids = self.dir / f"{name}.tmp{os.getpid()}.npy"
        np.save(tmp_ids, np.asarray(prefix, dtype=np.int32))
        os.replace(tmp_ids, ids_file)
        self.saved += 1

    def _load(self, llama, entry: StoredPrefix) -> None:
        import llama_cpp

        try:
            data = entry.path.read_bytes()
        except OSError as exc:
            log.warning("prefix state %s unreadable (%s): prefilling instead", entry.path, exc)
            return
        ctx = llama._ctx.ctx
        llama._ctx.kv_cache_clear()
        buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if not llama_cpp.llama_state_seq_set_data(ctx, buf, len(data), SEQ):
            log.warning("prefix state %s does not load into this model: deleted", entry.path)
            llama._ctx.kv_cache_clear()
            llama.n_tokens = 0
            for p in (entry.path, entry.path.with_name(entry.path.name.replace(".kv", ".ids.npy"))):
                p.unlink(missing_ok=True)
            return
        n = len(entry.ids)
        llama.input_ids[:n] = entry.ids
        llama.n_tokens = n
        llama._requires_eval = True  # the logits are not restored: generate must decode a token
        self.loaded += 1


def store_for(root: str | Path, gguf: Path, n_ctx: int, **kw) -> PrefixStates:
    """The store for one model file and context size under ``root``."""
    tag = f"{gguf.stem}-{gguf.stat().st_size}-ctx{n_ctx}"
    return PrefixStates(Path(root) / tag, **kw)
