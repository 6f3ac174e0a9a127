"""The in-tree scheduler plugins, one module per plugin, as in pkg/scheduler/framework/plugins/.

registry.in_tree_registry() maps each plugin name to the class that implements it.
"""
