"""Pure compilation of a Recording into a taught skill's files (bytes)."""
