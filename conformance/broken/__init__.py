"""Deliberately broken engines: the conformance suite must catch every one of them
(STYLE.md, "Test the suite itself").  They are not registered through entry
points; tests register them with ``Registry.register`` while they run."""
