"""Balanced spherical k-means of the assistant's embedding rows, for the centroid head.

The centroid head (docs/mtp.md § Centroid head) views token_ordering as [C, V/C]: every cluster
holds exactly V/C tokens. balanced_kmeans() therefore assigns tokens greedily by cosine
similarity under that capacity, then moves each centroid to its members' mean direction.
"""

import numpy as np


def balanced_assign(scores, capacity):
    """scores [V, C]: similarity of token v to cluster c. Each token goes to one cluster, each
    cluster takes exactly `capacity` tokens, best pairs first (ties by index). -> [V] cluster."""
    n_tok, n_c = scores.shape
    order = np.argsort(-scores, axis=None, kind="stable")
    owner = np.full(n_tok, -1, dtype=np.int64)
    fill = np.zeros(n_c, dtype=np.int64)
    left = n_tok
    for flat in order:
        v, c = divmod(int(flat), n_c)
        if owner[v] >= 0 or fill[c] >= capacity:
            continue
        owner[v] = c
        fill[c] += 1
        left -= 1
        if left == 0:
            break
    return owner


def balanced_kmeans(rows, n_clusters, iterations=8, seed=0):
    """rows [V, D] (V divisible by n_clusters). -> (centroids [C, D] unit vectors,
    ordering [V] int64: cluster 0's token ids ascending, then cluster 1's, ...)."""
    n_tok = rows.shape[0]
    if n_tok % n_clusters:
        raise ValueError(f"{n_clusters} clusters do not divide {n_tok} tokens")
    unit = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    rng = np.random.default_rng(seed)
    centroids = unit[rng.choice(n_tok, n_clusters, replace=False)]
    owner = None
    for _ in range(iterations):
        owner = balanced_assign(unit @ centroids.T, n_tok // n_clusters)
        for c in range(n_clusters):
            mean = unit[owner == c].sum(0)
            centroids[c] = mean / max(np.linalg.norm(mean), 1e-12)
    ordering = np.concatenate([np.flatnonzero(owner == c) for c in range(n_clusters)])
    return centroids, ordering.astype(np.int64)
