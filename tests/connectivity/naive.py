"""Naive references shared by the connectivity structure tests (test_ett, test_hdt)."""


def components(n, edges):
    """Union-find over ``edges``: a component label per vertex."""
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for u, v in edges:
        parent[find(u)] = find(v)
    return [find(x) for x in range(n)]
