"""The compiler: static checks over a loaded project, artifacts and their hashes."""
