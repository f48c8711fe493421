"""Minimal engines, one per problem: the code of ``docs/engines/<problem>.md`` and of
``streamspec new-engine``.

Each module holds one small, honest engine of its problem (``connectivity``,
``simjoin``, ``kws``, ``topkjoin``) that passes the shipped conformance suite.  They are
not registered: ``streamspec new-engine PROBLEM NAME DIR`` copies one into a new
installable package (``streamspec.pipeline.new_engine``), with ``name`` set to NAME and
an entry point in the package's ``pyproject.toml``; the contract pages quote them
verbatim (a test checks that page and module are identical).
"""

PROBLEMS = ("connectivity", "simjoin", "kws", "topkjoin")
#: the engine class of each template module
CLASSES = {"connectivity": "UnionFindEngine", "simjoin": "InvertedIndexEngine",
           "kws": "TreeGrowthEngine", "topkjoin": "RefreshTopEngine"}
#: the ``name`` line each template declares, which ``new-engine`` rewrites
NAME_LINE = '    name = "mine"\n'
