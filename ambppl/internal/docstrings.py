"""Docstring sections shared by several functions, written once.

A function's docstring names a shared section by a placeholder, ``{name}`` on a line of its
own at the section's indentation; :func:`filled` puts the text in at import, so that
``help()``, the documentation site and numpydoc read the whole docstring.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def filled(**sections: str) -> Callable[[F], F]:
    """A decorator that replaces each ``{name}`` in a docstring by ``sections[name]``.

    Parameters
    ----------
    **sections : str
        The texts, by placeholder name, indented as the docstring they go into (the first
        line without its indentation: the placeholder's line gives it).

    Returns
    -------
    callable
        The decorator; it returns the function it is given, its ``__doc__`` filled in.

    Raises
    ------
    ValueError
        At import, where a docstring names none of ``sections`` (a misspelt placeholder
        would otherwise reach the page as it is).

    Examples
    --------
    >>> @filled(extra="Returns\\n    -------\\n    int\\n        One.")
    ... def one():
    ...     '''One.
    ...
    ...     {extra}
    ...     '''
    ...     return 1
    >>> print(one.__doc__.strip().splitlines()[-1].strip())
    One.
    """

    def decorate(function: F) -> F:
        doc = function.__doc__ or ""
        if not any("{" + key + "}" in doc for key in sections):
            raise ValueError(
                f"the docstring of {function.__qualname__} must name one of the sections "
                f"{sorted(sections)} as {{name}}, but names none of them"
            )
        for key, text in sections.items():
            doc = doc.replace("{" + key + "}", text)
        function.__doc__ = doc
        return function

    return decorate
