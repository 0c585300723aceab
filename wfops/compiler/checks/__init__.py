"""The static checks of `wfops validate`: each returns diagnostics pointing at the node responsible."""
