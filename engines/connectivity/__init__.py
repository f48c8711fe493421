"""Connectivity engines (notes/connectivity.md): ``rwc``, ``bic``, ``dtree``."""
