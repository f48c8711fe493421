"""Bundled sample data for the README's main job and ``streamspec demo`` (a
package only so that ``pip install .`` ships the files).

- ``connectivity-edges.txt``: 3000 edges ``u v t`` in SNAP style, a seeded
  synthetic temporal graph of 300 vertices in 6 communities (header comment).
- ``connectivity-queries.txt``: 9 query pairs ``a b`` for it (inside and across
  communities, a self pair, a vertex that never occurs).
"""
