"""Derived resource graphs of the upstream recipe, one per layout (scripts/gen_recipe_graph.py)."""
