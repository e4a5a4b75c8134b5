"""Pure functions over one syntax tree, one concern a module."""
