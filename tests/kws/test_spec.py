"""The kws contract: parameters, tokens, validation, output order, netting of an instant."""
import pytest

from streamspec.reference.kws import OracleEngine, evaluate
from streamspec.spec.errors import InvalidParameter, InvalidRecord, OutOfOrder
from streamspec.spec.kws import (AddEdge, Appear, Delete, End, Insert, Params, RemoveEdge,
                      RemoveRelation)
from streamspec.spec.kws_schema import JoinEdge, Relation, Schema, normalise_keyword, tokens


def test_tokens_casefold_and_split():
    assert tokens("Pulp-Fiction (1994), STRASSE ß") == ["pulp", "fiction", "1994", "strasse", "ss"]
    assert normalise_keyword(" Tarantino! ") == "tarantino"
    with pytest.raises(ValueError):
        normalise_keyword("two words")
    with pytest.raises(ValueError):
        normalise_keyword("!!")


def test_params_validation(movie_schema):
    with pytest.raises(InvalidParameter):
        Params(movie_schema, "a", 0)
    with pytest.raises(InvalidParameter):
        Params(movie_schema, "a", 3, window=0)
    with pytest.raises(InvalidParameter):
        Params(movie_schema, "", 3)
    assert Params(movie_schema, "Travolta,travolta,X", 3).keywords == ("travolta", "x")
    with pytest.raises(InvalidParameter):
        Schema((Relation("R", ("a",)),), (JoinEdge("e", "R", "a", "S", "a"),))
    with pytest.raises(InvalidParameter):
        Relation("R", ("a", "a"))


def movie_events():
    return [Insert("director", "t1", {"did": 1, "name": "Quentin Tarantino"}, 1),
            Insert("movie", "t2", {"mid": 2, "did": 1, "title": "Pulp Fiction"}, 2),
            Insert("actor", "t3", {"aid": 3, "name": "John Travolta"}, 3),
            Insert("actor", "t4", {"aid": 4, "name": "Quentin Tarantino"}, 3),
            Insert("plays", "t5", {"mid": 2, "aid": 3}, 4),
            Insert("plays", "t6", {"mid": 5, "aid": 3}, 5),
            Insert("movie", "t8", {"mid": 5, "did": None, "title": "Four Rooms"}, 5),
            Insert("plays", "t7", {"mid": 5, "aid": 4}, 6)]


PULP = (("t1", "t2", "t3", "t5"), (("md", "t2", "t1"), ("pa", "t5", "t3"), ("pm", "t5", "t2")))
ROOMS = (("t3", "t4", "t6", "t7", "t8"),
         (("pa", "t6", "t3"), ("pa", "t7", "t4"), ("pm", "t6", "t8"), ("pm", "t7", "t8")))


def test_movie_example_window(movie_schema):
    """Paper Section 1: Tarantino directing Travolta, and both acting in one movie."""
    p = Params(movie_schema, "tarantino,travolta", 5, window=100)
    assert evaluate(p, movie_events()) == [Appear(4, *PULP, 101), Appear(6, *ROOMS, 103)]


def test_deletion_ends_a_result_and_negative_model(movie_schema):
    p = Params(movie_schema, "tarantino,travolta", 5)
    out = evaluate(p, movie_events() + [Delete("t6", 9)])
    assert out == [Appear(4, *PULP, None), Appear(6, *ROOMS, None), End(9, *ROOMS)]


def test_schema_change_ends_and_restarts(movie_schema):
    p = Params(movie_schema, "tarantino,travolta", 5, window=100)
    out = evaluate(p, movie_events() + [RemoveEdge("md", 8), AddEdge(JoinEdge("md", "movie", "did",
                                                                          "director", "did"), 9)])
    assert out[-2:] == [End(8, *PULP), Appear(9, *PULP, 101)]
    # removing and re-adding at one instant changes nothing
    same = evaluate(p, movie_events() + [RemoveEdge("md", 8),
                                         AddEdge(JoinEdge("md", "movie", "did", "director", "did"), 8)])
    assert same == evaluate(p, movie_events())


def test_self_join_orientations_are_distinct_results():
    schema = Schema((Relation("R", ("a", "b", "s")),), (JoinEdge("e", "R", "a", "R", "b"),))
    p = Params(schema, "x,y", 2)
    out = evaluate(p, [Insert("R", 1, {"a": 1, "b": 1, "s": "x"}, 0), Insert("R", 2, {"a": 1, "b": 1, "s": "y"}, 0)])
    assert out == [Appear(0, (1, 2), (("e", 1, 2),), None), Appear(0, (1, 2), (("e", 2, 1),), None)]


def test_tids_sort_ints_before_strs():
    schema = Schema((Relation("R", ("s",)),))
    p = Params(schema, "x", 1)
    out = evaluate(p, [Insert("R", "b", {"s": "x"}, 0), Insert("R", 10, {"s": "x"}, 0), Insert("R", 9, {"s": "X"}, 0)])
    assert [o.tids for o in out] == [(9,), (10,), ("b",)]


def test_bad_records_are_typed_and_atomic(movie_schema):
    p = Params(movie_schema, "tarantino", 3, window=5)
    eng = OracleEngine(p)
    list(eng.process([Insert("director", 1, {"name": "Tarantino"}, 0)]))
    bad_batches = [
        ([Insert("director", 2, {"name": "x"}, 1), Insert("nope", 3, {}, 1)], InvalidRecord, 2),
        ([Insert("director", 1, {}, 1)], InvalidRecord, 1),
        ([Insert("director", 2, {"nope": 1}, 1)], InvalidRecord, 1),
        ([Delete(1, 5)], InvalidRecord, 1),           # dead: t_end = 5
        ([Delete(99, 1)], InvalidRecord, 1),
        ([RemoveRelation("actor", 2), Insert("actor", 5, {}, 2)], InvalidRecord, 2),
        ([Insert("director", 2, {}, 3), Insert("director", 3, {}, 2)], OutOfOrder, 2),
    ]
    for batch, error, index in bad_batches:
        with pytest.raises(error) as info:
            list(eng.process(batch))
        assert info.value.index == index
    # nothing of the rejected batches was applied: tid 2 is still free, the schema unchanged
    out = list(eng.process([Insert("director", 2, {"name": "Tarantino"}, 1),
                            Insert("actor", 3, {"name": "tarantino"}, 2)])) + eng.flush()
    assert [o.tids for o in out] == [(1,), (2,), (3,)]
