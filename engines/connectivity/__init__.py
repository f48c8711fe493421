"""Connectivity engines (semantics: ``streamspec.spec.connectivity``): ``rwc``, ``bic``, ``dtree``, ..."""
