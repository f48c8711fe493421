"""Oracles: one module per problem, brute force straight from the definition."""
