"""Narrative coherence between documents (paper eq. 1; Keith Norambuena & Mitra 2021; German et al. 2025).

    theta(u, v) = sqrt( S(z_u, z_v) * T(p_u, p_v) )
    S = 1 - arccos(cos_sim(z_u, z_v)) / pi          angular similarity of the original embeddings
    T = 1 - JSD_b(p_u, p_v)                         topic similarity of the HDBSCAN membership vectors

``JSD_b`` is the Jensen-Shannon *distance* (Lin 1991) with log base ``b``, as
``scipy.spatial.distance.jensenshannon`` and the original code. With the original's natural log
the distance is at most sqrt(ln 2), so T never drops below 0.1674; with base 2 it spans [0, 1]
(JSD_2 = JSD_e / sqrt(ln 2)), so every cross-topic coherence and the critical coherence drop
(notebook 07 reports both). The diagonal is 0: the graph has no self-loops. theta is computed in
row blocks (:func:`coherence_row_blocks`), never with a float64 n x n temporary.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.spatial.distance import jensenshannon

from judgelab.embeddings import l2_normalise


def angular_similarity(z_u: np.ndarray, z_v: np.ndarray) -> float:
    """S = 1 - arccos(cos_sim)/pi, cos_sim clipped to [-1, 1] against rounding."""
    z_u, z_v = np.asarray(z_u, float), np.asarray(z_v, float)
    cos = float(z_u @ z_v / (np.linalg.norm(z_u) * np.linalg.norm(z_v)))
    return 1.0 - math.acos(min(1.0, max(-1.0, cos))) / math.pi


def topic_similarity(p_u: np.ndarray, p_v: np.ndarray, base: float = math.e) -> float:
    """T = 1 - Jensen-Shannon distance with log ``base`` (scipy.spatial.distance.jensenshannon)."""
    return 1.0 - float(jensenshannon(np.asarray(p_u, float), np.asarray(p_v, float), base=base))


def coherence(z_u, z_v, p_u, p_v, base: float = math.e) -> float:
    """theta(u, v) = sqrt(S * T) for one pair (the reference the matrix version is tested against)."""
    return math.sqrt(angular_similarity(z_u, z_v) * topic_similarity(p_u, p_v, base))


def _normalise_rows(p: np.ndarray, name: str) -> np.ndarray:
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_docs x n_topics), got shape {p.shape}")
    if (p < 0).any() or not np.isfinite(p).all():
        row = int(np.flatnonzero(~((p >= 0) & np.isfinite(p)).all(axis=1))[0])
        raise ValueError(f"{name}: row {row} has negative or non-finite values")
    sums = p.sum(axis=1, keepdims=True)
    if (sums <= 0).any():
        raise ValueError(f"{name}: row {int(np.flatnonzero(sums[:, 0] <= 0)[0])} sums to 0")
    return p / sums


def neg_entropy(x: np.ndarray) -> np.ndarray:
    """sum_k x_k ln x_k along the last axis, with 0 ln 0 = 0 (minus the Shannon entropy, nats)."""
    lx = np.log(np.maximum(x, np.finfo(x.dtype).tiny))
    lx *= x
    return lx.sum(axis=-1)


def js_distance_block(a: np.ndarray, p: np.ndarray, base: float = math.e,
                      h_a: np.ndarray | None = None, h_p: np.ndarray | None = None,
                      dtype=np.float64) -> np.ndarray:
    """Jensen-Shannon distances between rows of ``a`` (b x k) and rows of ``p`` (n x k), b x n:
    sqrt(max(0, H((p+q)/2) - (H(p) + H(q))/2) / ln(base)), as scipy's ``jensenshannon`` (tested);
    ``h_a``/``h_p`` are the rows' precomputed :func:`neg_entropy`."""
    a = np.asarray(a, dtype=dtype)
    p = np.asarray(p, dtype=dtype)
    h_a = neg_entropy(a) if h_a is None else h_a
    h_p = neg_entropy(p) if h_p is None else h_p
    m = a[:, None, :] + p[None, :, :]
    m *= 0.5
    jsd = 0.5 * (h_a[:, None] + h_p[None, :]) - neg_entropy(m)
    jsd /= math.log(base)
    np.maximum(jsd, 0, out=jsd)
    return np.sqrt(jsd, out=jsd)


def coherence_row_blocks(embeddings: np.ndarray, memberships: np.ndarray, base: float = math.e, *,
                         block_elements: int = 1_000_000, row_block_elements: int = 16_000_000,
                         compute_dtype=np.float64, threads: int | None = None):
    """Yield ``(i0, i1, block)``: theta[i0:i1, i0:] (float32; the upper part, diagonal theta(u, u)
    included: callers drop it). Memory is one block.

    Rows come in blocks of about ``row_block_elements`` entries sharing one matrix product (BLAS
    is slow on thin blocks); the JSD's b x n x k temporary is bounded by ``block_elements``, in
    ``compute_dtype`` (float32: about twice as fast, ~1e-6 error in theta). The JSD sub-blocks run
    on ``threads`` threads (default: the cores, at most 4), each alone, so the values do not depend
    on the number of threads.
    """
    z = l2_normalise(embeddings)
    p = _normalise_rows(memberships, "memberships").astype(compute_dtype)
    n, k = p.shape
    if z.shape[0] != n:
        raise ValueError(f"{z.shape[0]} embedding rows but {n} membership rows")
    h_p = neg_entropy(p)
    big = max(1, int(row_block_elements // n))
    small = max(1, int(block_elements // max(1, n * k)))
    threads = threads or min(4, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for i0 in range(0, n, big):
            i1 = min(n, i0 + big)
            cos = z[i0:i1] @ z[i0:].T                   # upper part only: columns i0..n-1
            np.clip(cos, -1.0, 1.0, out=cos)
            s = np.arccos(cos, out=cos)
            s *= -1.0 / math.pi
            s += 1.0                                    # S = 1 - arccos(cos)/pi

            def theta_rows(a0, i0=i0, i1=i1, s=s):
                a1 = min(i1, a0 + small)
                t = js_distance_block(p[a0:a1], p[i0:], base, h_a=h_p[a0:a1], h_p=h_p[i0:], dtype=compute_dtype)
                np.subtract(1.0, t, out=t)              # T = 1 - JSD
                np.maximum(t, 0, out=t)
                t *= s[a0 - i0:a1 - i0]
                s[a0 - i0:a1 - i0] = np.sqrt(t, out=t)  # theta, written over S

            list(pool.map(theta_rows, range(i0, i1, small)))
            yield i0, i1, s


def coherence_matrix(embeddings: np.ndarray, memberships: np.ndarray, base: float = math.e, *,
                     out: np.ndarray | None = None, block_elements: int = 1_000_000,
                     row_block_elements: int = 16_000_000, compute_dtype=np.float64) -> np.ndarray:
    """Dense coherence matrix theta (n x n float32, zero diagonal): the upper triangle of
    :func:`coherence_row_blocks`, mirrored, into ``out`` when given (e.g. a memory map)."""
    n = np.asarray(memberships).shape[0]
    if out is None:
        out = np.empty((n, n), dtype=np.float32)
    for i0, i1, s in coherence_row_blocks(embeddings, memberships, base, block_elements=block_elements,
                                          row_block_elements=row_block_elements, compute_dtype=compute_dtype):
        out[i0:i1, i0:] = s
        out[i1:, i0:i1] = s[:, i1 - i0:].T
        # inside the block's square, theta(u, v) and theta(v, u) were both computed and can differ
        # in the last bit (float32 sums depend on memory alignment): keep the upper one, u < v, so
        # the matrix is exactly symmetric and equal to what sparse_graph keeps
        low = np.tril_indices(i1 - i0, -1)
        square = out[i0:i1, i0:i1]
        square[low] = square.T[low]
    np.fill_diagonal(out, 0.0)
    return out


def offdiagonal(matrix: np.ndarray) -> np.ndarray:
    """The upper-triangle values (i < j) of a square matrix, as a flat array."""
    iu = np.triu_indices(matrix.shape[0], k=1)
    return matrix[iu]
