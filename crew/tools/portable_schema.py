"""Argument models that can be rebuilt: how a tool built in one process is used in another.

A tool's argument model is usually generated (from a signature, a docstring, a JSON-schema
dict). Such a class lives in no module, so ``pickle`` cannot name it, and a tool holding it
could not be sent to a Ray worker. Every generated model therefore carries its *recipe*:
the importable function and the arguments that made it. A pickled tool ships the recipe
(the function is pickled by reference, or by value under cloudpickle) and the copy builds
its own model on arrival.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

_ATTR = "__crew_recipe__"


class SchemaRecipe:
    """``make(*args, **kwargs)`` returns the model; ``build`` makes it and tags it with this recipe."""

    __slots__ = ("args", "kwargs", "make")

    def __init__(self, make: Callable[..., type[BaseModel]], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.make = make
        self.args = args
        self.kwargs = kwargs

    def __reduce__(self) -> tuple[Any, ...]:
        return SchemaRecipe, (self.make, self.args, self.kwargs)

    def build(self) -> type[BaseModel]:
        model = self.make(*self.args, **self.kwargs)
        setattr(model, _ATTR, self)
        return model


def generated(make: Callable[..., type[BaseModel]], *args: Any, **kwargs: Any) -> type[BaseModel]:
    """Build a model with ``make`` and remember how, so a pickled copy of its tool can rebuild it."""
    return SchemaRecipe(make, args, kwargs).build()


def recipe_of(model: type[BaseModel]) -> SchemaRecipe | None:
    """The recipe of a generated model (its own, not one inherited from a base class), or None."""
    recipe = vars(model).get(_ATTR)
    return recipe if isinstance(recipe, SchemaRecipe) else None


class ShippedSchema:
    """What a pickled tool holds in place of its generated argument model."""

    __slots__ = ("doc", "recipe")

    def __init__(self, recipe: SchemaRecipe, doc: str | None) -> None:
        self.recipe = recipe
        self.doc = doc

    def __reduce__(self) -> tuple[Any, ...]:
        return ShippedSchema, (self.recipe, self.doc)

    def build(self) -> type[BaseModel]:
        model = self.recipe.build()
        model.__doc__ = self.doc
        return model
