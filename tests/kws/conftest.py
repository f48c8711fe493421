"""Fixtures for the kws tests: the paper's movie database (Figure 1.1)."""
import pytest

from streamspec.spec.kws_schema import JoinEdge, Relation, Schema


@pytest.fixture
def movie_schema():
    return Schema(
        (Relation("director", ("did", "name")), Relation("movie", ("mid", "did", "title")),
         Relation("plays", ("mid", "aid")), Relation("actor", ("aid", "name"))),
        (JoinEdge("md", "movie", "did", "director", "did"), JoinEdge("pm", "plays", "mid", "movie", "mid"),
         JoinEdge("pa", "plays", "aid", "actor", "aid")))
