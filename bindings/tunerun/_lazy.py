"""Lazy package attributes (PEP 562). A rank imports what its trainable
uses and nothing more (no dataclasses, inspect, pandas...), so a fresh
trial's Python process starts sooner; the names behave as plain imports."""

import importlib


def install(namespace, table):
    """Makes each name of `table` ({name: "module" or "module:attribute"}) an
    attribute of the module whose globals are `namespace`, imported at first use."""

    def __getattr__(name):
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        module, _, attribute = target.partition(":")
        value = importlib.import_module(module)
        if attribute:
            value = getattr(value, attribute)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(table))

    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
    namespace["__all__"] = sorted(table)
