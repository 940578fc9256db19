"""A marshmallow schema's ``dump``, planned once per schema instead of worked out per value.

``Schema.dump`` asks each field, for every value, how to fetch and format it (``get_value``
through an accessor, ``serialize``, ``_serialize``, a nested schema's own ``dump``): a game's
view has about 90 fields, and that generic path was a quarter of a pick's CPU. ``planned(schema)``
returns a function giving exactly ``schema.dump(value)`` which, for the fields whose formatting
it knows (those that return the value as is, integers, strings, lists, dicts, nested schemas), reads
a dict's key and formats the value directly, and hands anything else to marshmallow:

- a schema with dump hooks, its own ``get_attribute`` or ``dict_class``, or ``many``: the whole
  dump goes to ``schema.dump``;
- a value that is not exactly a ``dict``: ``schema.dump``;
- a field whose key is absent (a default, ``missing``, or an attribute of the dict), dotted, or
  that does not read its attribute: ``field.serialize``, as ``dump`` calls it;
- a field type not listed above (UUID, dates, Dict...): its own ``_serialize``.

The schema stays the contract (openapi.yaml is generated from it) and the one definition of the
answer; tests/test_dumping.py checks ``planned(schema)(view) == schema.dump(view)`` for every
state of random games, from every seat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, fields, missing
from marshmallow.decorators import POST_DUMP, PRE_DUMP

Dump = Callable[[Any], Any]
# (value, attr, obj) -> the field's output, as ``Field._serialize`` gives it
Format = Callable[[Any, str | None, Any], Any]

_plans: dict[int, tuple[Schema, Dump]] = {}  # by id(schema), keeping the schema alive


def planned(schema: Schema) -> Dump:
    """``schema.dump`` (of one value), planned once for this schema instance. For schemas that
    live as long as the process (the adapters' and the routes'): each one planned is kept."""
    known = _plans.get(id(schema))
    if known is None or known[0] is not schema:
        known = _plans[id(schema)] = (schema, _plan(schema))
    return known[1]


def _plain_schema(schema: Schema) -> bool:
    return (
        not schema.many
        and not schema._hooks[PRE_DUMP]
        and not schema._hooks[POST_DUMP]
        and type(schema).get_attribute is Schema.get_attribute
        and schema.dict_class is dict
    )


def _plan(schema: Schema) -> Dump:
    if not _plain_schema(schema):
        return lambda value: schema.dump(value, many=False)
    steps = [_step(schema, name, field) for name, field in schema.dump_fields.items()]

    def dump(value: Any) -> Any:
        if type(value) is not dict:
            return schema.dump(value, many=False)
        out = {}
        for name, key, out_key, formatted, field, absent_skips, kept in steps:
            item = value.get(key, missing) if key is not None else missing
            if item is not missing:
                # A value its field gives back as it is (most of a view's ~90: raw values,
                # ints, strings) is kept without calling the formatting: a Python call per
                # field was a third of the dump (callgrind).
                out[out_key] = item if type(item) in kept else formatted(item, name, value)
            elif not absent_skips:  # marshmallow's own way: defaults, attributes, dotted keys
                item = field.serialize(name, value, accessor=schema.get_attribute)
                if item is not missing:
                    out[out_key] = item
        return out

    return dump


def _step(
    schema: Schema, name: str, field: fields.Field
) -> tuple[str, str | None, str, Format, fields.Field, bool, frozenset[type]]:
    """How to dump one field of a dict: its name, the key to read (None: ask marshmallow), the
    key to write, the formatting, the field, whether an absent key leaves the field out (as
    ``get_value`` finds no attribute of that name on a dict, and there is no default), and the
    types of value the formatting gives back as they are (:func:`_kept`)."""
    key = name if field.attribute is None else field.attribute
    direct = field._CHECK_ATTRIBUTE and "." not in key
    out_key = field.data_key if field.data_key is not None else name
    absent_skips = direct and field.dump_default is missing and not hasattr(dict, key)
    formatted = _format(field)
    return name, key if direct else None, out_key, formatted, field, absent_skips, _kept(field)


_NOTHING_KEPT: frozenset[type] = frozenset()


def _kept(field: fields.Field) -> frozenset[type]:
    """The exact types of value that :func:`_format`'s formatting of ``field`` returns unchanged,
    so the dump may keep them without calling it: every type for a field that formats nothing
    (an empty set stands for none here, so those keep their call: the common ones are listed),
    ``int`` for an integer field, ``str`` for a string field (and None for both); none for the
    others."""
    serialize = type(field)._serialize
    if serialize is fields.Field._serialize:  # Boolean, Raw...: the value as is
        return frozenset({bool, int, str, type(None)})
    if (
        isinstance(field, fields.Number)
        and serialize is fields.Number._serialize
        and field.num_type is int
        and not field.as_string
    ):
        return frozenset({int, type(None)})  # Number._serialize gives None for None
    if serialize is fields.String._serialize:
        return frozenset({str, type(None)})  # and String's too
    return _NOTHING_KEPT


def _format(field: fields.Field) -> Format:
    """What ``field._serialize`` does, without asking the field each time where it can."""
    serialize = type(field)._serialize
    if serialize is fields.Field._serialize:  # Boolean, Raw...: the value as is
        return lambda value, attr, obj: value
    if (
        isinstance(field, fields.Number)
        and serialize is fields.Number._serialize
        and field.num_type is int
        and not field.as_string
    ):
        return lambda value, attr, obj: (
            value if type(value) is int else None if value is None else int(value)
        )
    if serialize is fields.String._serialize:
        slow = field._serialize
        return lambda value, attr, obj: value if type(value) is str else slow(value, attr, obj)
    if isinstance(field, fields.List) and serialize is fields.List._serialize:
        return _list_format(field)
    if isinstance(field, fields.Nested) and serialize is fields.Nested._serialize:
        return _nested_format(field)
    if isinstance(field, fields.Mapping) and serialize is fields.Mapping._serialize:
        return _mapping_format(field)
    return field._serialize


def _list_format(field: fields.List) -> Format:
    inner, kept = _format(field.inner), _kept(field.inner)

    def formatted(value: Any, attr: str | None, obj: Any) -> Any:
        if value is None:
            return None
        if kept and kept.issuperset(map(type, value)):  # a hand: strings kept as they are
            return list(value)
        return [inner(each, attr, obj) for each in value]

    return formatted


def _nested_format(field: fields.Nested) -> Format:
    schema = field.schema
    if not _plain_schema(schema):  # hooks may see the whole list: leave it to marshmallow
        return field._serialize
    dump, many = planned(schema), field.many

    def formatted(value: Any, attr: str | None, obj: Any) -> Any:
        if value is None:
            return None
        return [dump(each) for each in value] if many else dump(value)

    return formatted


def _mapping_format(field: fields.Mapping) -> Format:
    if field.mapping_type is not dict or field.key_field is None or field.value_field is None:
        return field._serialize
    key, item = _format(field.key_field), _format(field.value_field)
    keys_kept, items_kept = _kept(field.key_field), _kept(field.value_field)

    def formatted(value: Any, attr: str | None, obj: Any) -> Any:
        if value is None:
            return None
        if (
            keys_kept
            and items_kept
            and keys_kept.issuperset(map(type, value))
            and items_kept.issuperset(map(type, value.values()))
        ):  # counts by card: kept as they are, as in a list
            return dict(value)
        return {key(k, None, None): item(v, None, None) for k, v in value.items()}

    return formatted
