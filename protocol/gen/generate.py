#!/usr/bin/env python3
"""Generates C++ message types from Runnel's schema files.

One schema file per API key (protocol/schema/NN_name.schema, format described
in protocol/schema/README.md) becomes, under the output directory:

  protocol/messages/NN_name.h         request and response structs, and the Api traits
  protocol/messages/NN_name.cc        encode/decode for every version
  protocol/messages/NN_name_random.cc randomize(), for the round-trip tests
  protocol/messages/all_apis.h        the list of every API, in key order

A record schema (protocol/schema/coordinator/NN_name.schema: the key and value
of one record type of a coordinator's internal topic, NN the type) becomes
protocol/coordinator/NN_name.h, .cc and _random.cc likewise, and
protocol/coordinator/all_records.h lists them.

Usage: generate.py OUT_DIR SCHEMA...
"""

import os
import re
import sys

PRIMITIVES = {
    # name: (C++ type, writer/reader method, fixed size)
    "bool": ("bool", "boolean", 1),
    "int8": ("int8_t", "i8", 1),
    "int16": ("int16_t", "i16", 2),
    "uint16": ("uint16_t", "u16", 2),
    "int32": ("int32_t", "i32", 4),
    "uint32": ("uint32_t", "u32", 4),
    "int64": ("int64_t", "i64", 8),
    "float64": ("double", "f64", 8),
    "uuid": ("Uuid", "uuid", 16),
}
VARIABLE = {"string", "bytes", "records"}
NEVER = 1 << 15  # version bound meaning "no version"


class SchemaError(Exception):
    pass


class Versions:
    """An inclusive version range; hi is NEVER-1 for open ranges (vN+)."""

    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    @staticmethod
    def parse(text, where):
        m = re.fullmatch(r"v?(\d+)(\+|-(\d+))?", text)
        if not m:
            raise SchemaError(f"{where}: bad version range '{text}'")
        lo = int(m.group(1))
        if m.group(2) == "+":
            return Versions(lo, NEVER - 1)
        if m.group(3) is not None:
            return Versions(lo, int(m.group(3)))
        return Versions(lo, lo)

    def intersect(self, other):
        return Versions(max(self.lo, other.lo), min(self.hi, other.hi))

    def empty(self):
        return self.lo > self.hi

    def covers(self, other):
        return self.lo <= other.lo and other.hi <= self.hi

    def condition(self, within):
        """C++ condition on `version` for this range, given the enclosing range."""
        parts = []
        if self.lo > within.lo:
            parts.append(f"version >= {self.lo}")
        if self.hi < within.hi:
            parts.append(f"version <= {self.hi}")
        return " && ".join(parts)


def snake(name):
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return s.lower()


class Field:
    def __init__(self, name, type_text, where):
        self.name = name
        self.cpp_name = snake(name)
        self.where = where
        self.is_array = type_text.startswith("[]")
        self.type = type_text[2:] if self.is_array else type_text
        self.versions = None
        self.nullable = None  # Versions or None
        self.tag = None
        self.default = None
        self.struct = None  # Struct for struct-typed fields

    @property
    def is_struct(self):
        return self.type not in PRIMITIVES and self.type not in VARIABLE


class Struct:
    def __init__(self, name):
        self.name = name
        self.fields = []


class Api:
    def __init__(self):
        self.name = None
        self.key = None
        self.versions = None
        self.flexible = Versions(NEVER, NEVER)
        self.request = None
        self.response = None
        self.common = {}
        self.file_stem = None


class Record:
    """A record type of a coordinator's internal topic: a key and a value,
    each a message with versions of its own (an Api with only a request)."""

    def __init__(self):
        self.name = None
        self.type = None
        self.key = None
        self.value = None
        self.file_stem = None


def schema_lines(path):
    """(line number, indent, words) of every line that is not a comment."""
    lines = []
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            text = raw.split("#", 1)[0].rstrip()
            if not text.strip():
                continue
            if "\t" in raw[: len(raw) - len(raw.lstrip())]:
                raise SchemaError(f"{path}:{n}: indent with spaces, not tabs")
            indent = len(text) - len(text.lstrip())
            lines.append((n, indent, text.split()))
    return lines


def parse_schema(path):
    lines = schema_lines(path)
    if lines and lines[0][2][0] == "record":
        return parse_record(path, lines)
    api = Api()
    api.file_stem = os.path.splitext(os.path.basename(path))[0]

    i = 0
    while i < len(lines):
        n, indent, words = lines[i]
        where = f"{path}:{n}"
        if indent != 0:
            raise SchemaError(f"{where}: unexpected indentation")
        if words[0] == "api":
            # api NAME key N versions A-B flexible F+|none
            opts = dict(zip(words[2::2], words[3::2]))
            api.name = words[1]
            api.key = int(opts["key"])
            api.versions = Versions.parse(opts["versions"], where)
            flex = opts.get("flexible", "none")
            if flex != "none":
                api.flexible = Versions.parse(flex, where)
            i += 1
        elif words[0] in ("request", "response", "struct"):
            if words[0] == "struct":
                struct = Struct(words[1])
            else:
                struct = Struct(api.name + words[0].capitalize())
            i = parse_fields(lines, i + 1, 2, struct, path)
            if words[0] == "struct":
                api.common[struct.name] = struct
            else:
                setattr(api, words[0], struct)
        else:
            raise SchemaError(f"{where}: expected api, request, response or struct")
    if api.name is None or api.request is None or api.response is None:
        raise SchemaError(f"{path}: needs an api line, a request and a response")
    resolve(api, api.request, api.versions, path)
    resolve(api, api.response, api.versions, path)
    return api


def parse_record(path, lines):
    # record NAME type N, then `key versions A-B flexible F+|none` and
    # `value ...` lines, each followed by its fields.
    rec = Record()
    rec.file_stem = os.path.splitext(os.path.basename(path))[0]
    n, _, words = lines[0]
    opts = dict(zip(words[2::2], words[3::2]))
    if len(words) < 4 or "type" not in opts:
        raise SchemaError(f"{path}:{n}: expected 'record NAME type N'")
    rec.name = words[1]
    rec.type = int(opts["type"])
    # Shared structs (`struct NAME` blocks, before the key) serve the value.
    shared = {}
    i = 1
    while i < len(lines) and lines[i][1] == 0 and lines[i][2][0] == "struct":
        struct = Struct(lines[i][2][1])
        i = parse_fields(lines, i + 1, 2, struct, path)
        shared[struct.name] = struct
    while i < len(lines):
        n, indent, words = lines[i]
        where = f"{path}:{n}"
        if indent != 0 or words[0] not in ("key", "value") or getattr(rec, words[0]) is not None:
            raise SchemaError(f"{where}: expected one key and one value block")
        part = Api()
        part.file_stem = rec.file_stem
        part.name = rec.name + words[0].capitalize()
        part.key = rec.type
        opts = dict(zip(words[1::2], words[2::2]))
        part.versions = Versions.parse(opts.get("versions", "0"), where)
        flex = opts.get("flexible", "none")
        if flex != "none":
            part.flexible = Versions.parse(flex, where)
        part.request = Struct(part.name)
        if words[0] == "value":
            part.common = shared
        i = parse_fields(lines, i + 1, 2, part.request, path)
        resolve(part, part.request, part.versions, path)
        setattr(rec, words[0], part)
    if rec.key is None or rec.value is None:
        raise SchemaError(f"{path}: a record needs a key and a value")
    return rec


def parse_fields(lines, i, indent, struct, path):
    while i < len(lines):
        n, ind, words = lines[i]
        if ind < indent:
            return i
        where = f"{path}:{n}"
        if ind > indent:
            raise SchemaError(f"{where}: unexpected indentation")
        if len(words) < 2:
            raise SchemaError(f"{where}: a field needs a name and a type")
        field = Field(words[0], words[1], where)
        rest = words[2:]
        j = 0
        while j < len(rest):
            w = rest[j]
            if re.fullmatch(r"v\d+(\+|-\d+)?", w):
                field.versions = Versions.parse(w, where)
            elif w == "nullable":
                if j + 1 < len(rest) and re.fullmatch(r"v\d+(\+|-\d+)?", rest[j + 1]):
                    field.nullable = Versions.parse(rest[j + 1], where)
                    j += 1
                else:
                    field.nullable = Versions(0, NEVER - 1)
            elif w == "tag":
                field.tag = int(rest[j + 1])
                j += 1
            elif w == "default":
                field.default = rest[j + 1]
                j += 1
            else:
                raise SchemaError(f"{where}: unknown attribute '{w}'")
            j += 1
        i += 1
        if i < len(lines) and lines[i][1] > indent:
            if not field.is_struct:
                raise SchemaError(f"{where}: only struct fields have nested fields")
            field.struct = Struct(field.type)
            i = parse_fields(lines, i, lines[i][1], field.struct, path)
        struct.fields.append(field)
    return i


def resolve(api, struct, within, path):
    """Fills in version ranges, binds struct references, checks the rules."""
    tags = set()
    for f in struct.fields:
        if f.versions is None:
            f.versions = Versions(within.lo, within.hi)
        f.versions = f.versions.intersect(within)
        if f.versions.empty():
            raise SchemaError(f"{f.where}: field '{f.name}' is outside the versions of its parent")
        if f.is_struct and f.struct is None:
            if f.type not in api.common:
                raise SchemaError(f"{f.where}: unknown type '{f.type}'")
            f.struct = api.common[f.type]
            f.shared = True
        else:
            f.shared = False
        if f.tag is not None:
            if f.tag in tags:
                raise SchemaError(f"{f.where}: tag {f.tag} used twice")
            tags.add(f.tag)
            if not api.flexible.covers(f.versions):
                raise SchemaError(f"{f.where}: tagged field outside the flexible versions")
        if f.nullable is not None:
            f.nullable = f.nullable.intersect(f.versions)
            if not f.is_array and f.type not in ("string", "bytes", "records") and not f.is_struct:
                raise SchemaError(f"{f.where}: {f.type} cannot be nullable")
        if f.type == "records" and f.is_array:
            raise SchemaError(f"{f.where}: records cannot be an array")
        if f.struct is not None and not f.shared:
            resolve(api, f.struct, f.versions, path)
    for s in api.common.values():
        if not getattr(s, "resolved", False):
            s.resolved = True
            resolve(api, s, api.versions, path)


# ---------------------------------------------------------------- C++ output


def has_error_code(s, seen=None):
    """Whether a struct, or one nested in it, has an int16 ErrorCode."""
    seen = seen or set()
    if s.name in seen:
        return False
    seen.add(s.name)
    for f in s.fields:
        if f.cpp_name == "error_code" and f.type == "int16" and not f.is_array:
            return True
        if f.struct is not None and has_error_code(f.struct, seen):
            return True
    return False


def cpp_value_type(f):
    if f.type in PRIMITIVES:
        base = PRIMITIVES[f.type][0]
    elif f.type == "string":
        base = "std::string"
    elif f.type == "bytes":
        base = "Bytes"
    elif f.type == "records":
        return "Records"
    else:
        base = f.struct.name
    if f.is_array:
        base = f"std::vector<{base}>"
    if f.nullable is not None:
        base = f"std::optional<{base}>"
    return base


def cpp_default(f):
    """The member initializer: Kafka's default for the field."""
    d = f.default
    if f.type == "records":
        return ""
    if d == "null":
        if f.nullable is None:
            raise SchemaError(f"{f.where}: default null needs a nullable field")
        return "{std::nullopt}"
    if f.nullable is not None:
        if f.is_array or f.is_struct:
            inner = cpp_value_type(f)[len("std::optional<"):-1]
            return "{" + inner + "{}}"
        if f.type == "string":
            return "{std::string(" + (d if d else '""') + ")}"
        if f.type == "bytes":
            return "{Bytes{}}"
    if d is None:
        if f.type in PRIMITIVES and not f.is_array and f.type != "uuid":
            return "{}"
        return ""
    if f.is_array:
        raise SchemaError(f"{f.where}: arrays take no default")
    if f.type == "bool":
        if d not in ("true", "false"):
            raise SchemaError(f"{f.where}: bool default must be true or false")
        return "{" + d + "}"
    if f.type == "string":
        return "{" + d + "}"
    if f.type in PRIMITIVES and f.type not in ("uuid",):
        ctype = PRIMITIVES[f.type][0]
        return "{static_cast<" + ctype + ">(" + d + ")}"
    raise SchemaError(f"{f.where}: a {f.type} takes no default")


class Emitter:
    def __init__(self, api):
        self.api = api
        self.flex = api.flexible

    # -- declarations

    def declare_struct(self, s, out, indent, emitted):
        pad = " " * indent
        out.append(f"{pad}struct {s.name} {{")
        for f in s.fields:
            if f.struct is not None and not f.shared and f.struct.name not in emitted:
                emitted.add(f.struct.name)
                self.declare_struct(f.struct, out, indent + 2, emitted)
                out.append("")
        for f in s.fields:
            comment = self.field_comment(f)
            out.append(f"{pad}  {cpp_value_type(f)} {f.cpp_name}{cpp_default(f)};{comment}")
        if not self.flex.intersect(self.api.versions).empty():
            out.append(f"{pad}  std::vector<RawTaggedField> unknown_tagged_fields;")
        out.append("")
        out.append(f"{pad}  template <typename W>")
        out.append(f"{pad}  void encode(W& w, int16_t version) const;")
        out.append(f"{pad}  void decode(Reader& r, int16_t version);")
        out.append(f"{pad}  size_t size(int16_t version) const {{")
        out.append(f"{pad}    SizeCounter c;")
        out.append(f"{pad}    encode(c, version);")
        out.append(f"{pad}    return c.size();")
        out.append(f"{pad}  }}")
        out.append(f"{pad}  void randomize(Randomizer& rnd, int16_t version);")
        out.append(f"{pad}  bool operator==(const {s.name}&) const = default;")
        self.declare_error_visitor(s, out, pad)
        out.append(f"{pad}}};")

    def declare_error_visitor(self, s, out, pad):
        """for_each_error_code(f): f(code) for every ErrorCode in the message,
        nested ones included, as Kafka's errorCounts() walks a response."""
        body = []
        for f in s.fields:
            if f.cpp_name == "error_code" and f.type == "int16" and not f.is_array:
                body.append(f"f({'*' if f.nullable is not None else ''}error_code);")
            elif f.struct is not None and has_error_code(f.struct):
                ref = f.cpp_name
                if f.nullable is not None:
                    body.append(f"if ({ref}) {{")
                    ref = f"(*{ref})"
                if f.is_array:
                    body.append(f"for (const auto& e : {ref}) e.for_each_error_code(f);")
                else:
                    body.append(f"{ref}.for_each_error_code(f);")
                if f.nullable is not None:
                    body.append("}")
        if not body:
            return
        out.append(f"{pad}  template <typename F>")
        out.append(f"{pad}  void for_each_error_code(F& f) const {{")
        out.extend(f"{pad}    {line}" for line in body)
        out.append(f"{pad}  }}")

    def field_comment(self, f):
        notes = []
        v = f.versions
        if v.hi >= NEVER - 1:
            notes.append(f"v{v.lo}+")
        else:
            notes.append(f"v{v.lo}-{v.hi}")
        if f.nullable is not None:
            notes.append("nullable")
        if f.tag is not None:
            notes.append(f"tag {f.tag}")
        return "  // " + ", ".join(notes)

    # -- encode

    def encode_struct(self, s, qual, within, out):
        out.append("template <typename W>")
        out.append(f"void {qual}::encode(W& w, int16_t version) const {{")
        flex_cond = self.flex_expr(within)
        out.append(f"  [[maybe_unused]] const bool flexible = {flex_cond};")
        for f in s.fields:
            if f.tag is not None:
                continue
            cond = f.versions.condition(within)
            body = self.encode_value(f, f"this->{f.cpp_name}", "flexible", "w")
            self.guarded(out, cond, body, 1)
        if not self.flex.intersect(within).empty():
            tagged = sorted((f for f in s.fields if f.tag is not None), key=lambda f: f.tag)
            out.append("  if (flexible) {")
            out.append("    uint32_t tag_count = static_cast<uint32_t>(unknown_tagged_fields.size());")
            for f in tagged:
                cond = self.tag_present(f, within)
                out.append(f"    if ({cond}) ++tag_count;")
            out.append("    w.uvarint(tag_count);")
            out.append("    size_t raw = 0;")
            for f in tagged:
                cond = self.tag_present(f, within)
                if f.tag > 0:
                    out.append(f"    while (raw < unknown_tagged_fields.size() && unknown_tagged_fields[raw].tag < {f.tag})")
                    out.append("      put_raw_tag(w, unknown_tagged_fields[raw++]);")
                out.append(f"    if ({cond}) {{")
                out.append(f"      put_tagged(w, {f.tag}, [&](auto& tw) {{")
                for line in self.encode_value(f, f"this->{f.cpp_name}", "true", "tw"):
                    out.append("        " + line)
                out.append("      });")
                out.append("    }")
            out.append("    while (raw < unknown_tagged_fields.size()) put_raw_tag(w, unknown_tagged_fields[raw++]);")
            out.append("  }")
        out.append("}")
        out.append(f"template void {qual}::encode<Writer>(Writer&, int16_t) const;")
        out.append(f"template void {qual}::encode<SizeCounter>(SizeCounter&, int16_t) const;")
        out.append("")

    def tag_present(self, f, within):
        cond = f.versions.condition(within)
        default_check = f"!(this->{f.cpp_name} == {self.default_expr(f)})"
        return f"{cond} && {default_check}" if cond else default_check

    def default_expr(self, f):
        init = cpp_default(f)
        t = cpp_value_type(f)
        return f"{t}{init}" if init else f"{t}{{}}"

    def flex_expr(self, within):
        rng = self.flex.intersect(within)
        if rng.empty():
            return "false"
        cond = rng.condition(within)
        return cond if cond else "true"

    def guarded(self, out, cond, body, depth):
        pad = "  " * depth
        if cond:
            out.append(f"{pad}if ({cond}) {{")
            for line in body:
                out.append(pad + "  " + line)
            out.append(f"{pad}}}")
        else:
            for line in body:
                out.append(pad + line)

    def encode_value(self, f, expr, flex, w):
        """Lines that write `expr` (the field's C++ value)."""
        nullable = f.nullable
        lines = []
        if f.type == "records":
            return [f"put_records({w}, {expr}, {flex});"]
        if nullable is not None:
            null_cond = nullable.condition(f.versions)
            deref = f"(*{expr})"
            if f.is_array:
                inner = self.encode_array(f, deref, flex, w)
                null_line = f"put_null_length({w}, {flex});"
            elif f.is_struct:
                inner = [f"{w}.i8(1);", f"{deref}.encode({w}, version);"]
                null_line = f"{w}.i8(-1);"
            elif f.type == "string":
                return self.nullable_scalar(f, expr, flex, w, "string", null_cond)
            else:
                return self.nullable_scalar(f, expr, flex, w, "bytes", null_cond)
            if null_cond:
                # Nullable only in some versions: null elsewhere writes empty.
                lines.append(f"if ({expr}) {{")
                lines += ["  " + x for x in inner]
                lines.append(f"}} else if ({null_cond}) {{")
                lines.append(f"  {null_line}")
                lines.append("} else {")
                empty = self.encode_empty(f, flex, w)
                lines += ["  " + x for x in empty]
                lines.append("}")
            else:
                lines.append(f"if ({expr}) {{")
                lines += ["  " + x for x in inner]
                lines.append("} else {")
                lines.append(f"  {null_line}")
                lines.append("}")
            return lines
        if f.is_array:
            return self.encode_array(f, expr, flex, w)
        return self.encode_scalar(f.type, f, expr, flex, w)

    def nullable_scalar(self, f, expr, flex, w, kind, null_cond):
        if not null_cond:
            return [f"put_nullable_{kind}({w}, {expr}, {flex});"]
        empty = "std::string()" if kind == "string" else "Bytes()"
        return [
            f"if ({expr} || ({null_cond})) put_nullable_{kind}({w}, {expr}, {flex});",
            f"else put_{kind}({w}, {empty}, {flex});",
        ]

    def encode_empty(self, f, flex, w):
        if f.is_array:
            return [f"put_length({w}, 0, {flex});"]
        return [f"{f.struct.name}{{}}.encode({w}, version);"]

    def encode_array(self, f, expr, flex, w):
        lines = [f"put_length({w}, {expr}.size(), {flex});", f"for (const auto& e : {expr}) {{"]
        lines += ["  " + x for x in self.encode_scalar(f.type, f, "e", flex, w)]
        lines.append("}")
        return lines

    def encode_scalar(self, t, f, expr, flex, w):
        if t in PRIMITIVES:
            return [f"{w}.{PRIMITIVES[t][1]}({expr});"]
        if t == "string":
            return [f"put_string({w}, {expr}, {flex});"]
        if t == "bytes":
            return [f"put_bytes({w}, {expr}, {flex});"]
        return [f"{expr}.encode({w}, version);"]

    # -- decode

    def decode_struct(self, s, qual, within, out):
        out.append(f"void {qual}::decode(Reader& r, int16_t version) {{")
        out.append(f"  *this = {qual}();")
        out.append(f"  [[maybe_unused]] const bool flexible = {self.flex_expr(within)};")
        for f in s.fields:
            if f.tag is not None:
                continue
            cond = f.versions.condition(within)
            body = self.decode_value(f, f"this->{f.cpp_name}", "flexible", "r")
            self.guarded(out, cond, body, 1)
        if not self.flex.intersect(within).empty():
            tagged = [f for f in s.fields if f.tag is not None]
            out.append("  if (flexible) {")
            out.append("    uint32_t tag_count = r.uvarint();")
            out.append("    if (tag_count > r.remaining()) r.fail(\"tag count past end of input\");")
            out.append("    for (uint32_t i = 0; i < tag_count && r.ok(); ++i) {")
            out.append("      uint32_t tag = r.uvarint();")
            out.append("      uint32_t tag_size = r.uvarint();")
            out.append("      if (!r.ok()) break;")
            out.append("      switch (tag) {")
            for f in tagged:
                cond = f.versions.condition(within) or "true"
                out.append(f"        case {f.tag}:")
                out.append(f"          if ({cond}) {{")
                out.append("            get_tagged(r, tag_size, [&](Reader& tr) {")
                for line in self.decode_value(f, f"this->{f.cpp_name}", "true", "tr"):
                    out.append("              " + line)
                out.append("            });")
                out.append("            continue;")
                out.append("          }")
                out.append("          break;")
            out.append("        default:")
            out.append("          break;")
            out.append("      }")
            out.append("      if (tag_size > r.remaining()) { r.fail(\"tagged field past end of input\"); break; }")
            out.append("      unknown_tagged_fields.push_back({tag, r.bytes(tag_size)});")
            out.append("    }")
            out.append("  }")
        out.append("}")
        out.append("")

    def null_check(self, f, r):
        """A statement failing the reader when null arrives in a version
        where the field is not nullable, or "" if it is nullable in all."""
        cond = f.nullable.condition(f.versions)
        if not cond:
            return ""
        return f" if (!({cond})) {r}.fail(\"null in a field not nullable in this version\");"

    def decode_value(self, f, expr, flex, r):
        if f.type == "records":
            return [f"{expr} = get_records({r}, {flex});"]
        if f.is_array:
            lines = [f"int64_t n = get_count({r}, {flex});"]
            if f.nullable is not None:
                lines.append(f"if (n < 0) {{ {expr} = std::nullopt;{self.null_check(f, r)} }} else {{")
                target = f"{expr}.emplace()"
                lines.append(f"  auto& vec = {target};")
            else:
                lines.append(f"if (n < 0) {r}.fail(\"null in a non-nullable array\");")
                lines.append("{")
                lines.append(f"  auto& vec = {expr};")
            if f.type in PRIMITIVES:
                size = PRIMITIVES[f.type][2]
                lines.append(f"  if (fits({r}, n, {size})) vec.reserve(static_cast<size_t>(n > 0 ? n : 0));")
            for_body = self.decode_scalar(f.type, f, "vec.emplace_back()", flex, r, element=True)
            lines.append(f"  for (int64_t i = 0; i < n && {r}.ok(); ++i) {{")
            lines += ["    " + x for x in for_body]
            lines.append("  }")
            lines.append("}")
            return ["{"] + ["  " + x for x in lines] + ["}"]
        if f.nullable is not None:
            check = self.null_check(f, r)
            if f.is_struct:
                return [
                    f"if ({r}.i8() < 0) {{",
                    f"  {expr} = std::nullopt;{check}",
                    "} else {",
                    f"  {expr}.emplace().decode({r}, version);",
                    "}",
                ]
            kind = "string" if f.type == "string" else "bytes"
            lines = [f"{expr} = get_nullable_{kind}({r}, {flex});"]
            if check:
                lines.append(f"if (!{expr}){check}")
            return lines
        return self.decode_scalar(f.type, f, expr, flex, r)

    def decode_scalar(self, t, f, target, flex, r, element=False):
        if t in PRIMITIVES:
            v = f"{r}.{PRIMITIVES[t][1]}()"
        elif t == "string":
            v = f"get_string({r}, {flex})"
        elif t == "bytes":
            v = f"get_bytes({r}, {flex})"
        else:
            return [f"{target}.decode({r}, version);"]
        return [f"{target} = {v};"]

    # -- randomize (tests only)

    def randomize_struct(self, s, qual, within, out):
        out.append(f"void {qual}::randomize(Randomizer& rnd, int16_t version) {{")
        out.append("  Randomizer::Nest nest(rnd);")
        for f in s.fields:
            cond = f.versions.condition(within)
            body = self.randomize_value(f, f"this->{f.cpp_name}")
            if f.tag is not None:
                body = ["if (rnd.coin()) {"] + ["  " + x for x in body] + ["}"]
            self.guarded(out, cond, body, 1)
        flex = self.flex.intersect(within)
        if not flex.empty():
            max_tag = max([f.tag for f in s.fields if f.tag is not None], default=-1)
            cond = flex.condition(within)
            line = f"unknown_tagged_fields = rnd.unknown_tags({max_tag + 1 if max_tag >= 0 else 0});"
            self.guarded(out, cond, [line], 1)
        out.append("}")
        out.append("")

    def randomize_value(self, f, expr):
        if f.type == "records":
            return [f"{expr} = rnd.records();"]
        lines = []
        null_cond = None
        if f.nullable is not None:
            null_cond = f.nullable.condition(f.versions) or "true"
            lines.append(f"if (({null_cond}) && rnd.coin()) {{")
            lines.append(f"  {expr} = std::nullopt;")
            lines.append("} else {")
            lines.append(f"  auto& x = {expr}.emplace();")
            inner = self.randomize_plain(f, "x")
            lines += ["  " + l for l in inner]
            lines.append("}")
            return lines
        return self.randomize_plain(f, expr)

    def randomize_plain(self, f, expr):
        if f.is_array:
            body = self.randomize_scalar(f.type, "e")
            return [
                f"{expr}.resize(rnd.count());",
                f"for (auto& e : {expr}) {{",
            ] + ["  " + x for x in body] + ["}"]
        return self.randomize_scalar(f.type, expr)

    def randomize_scalar(self, t, expr):
        if t in PRIMITIVES:
            return [f"{expr} = rnd.{PRIMITIVES[t][1] if t != 'bool' else 'coin'}();"]
        if t == "string":
            return [f"{expr} = rnd.str();"]
        if t == "bytes":
            return [f"{expr} = rnd.bytes();"]
        return [f"{expr}.randomize(rnd, version);"]

    # -- walking

    def all_structs(self):
        """(struct, qualified name, version range) for every struct, outermost last."""
        result = []
        seen = set()

        def walk(s, qual, within):
            for f in s.fields:
                if f.struct is not None and not f.shared:
                    walk(f.struct, f"{qual}::{f.struct.name}", f.versions)
            result.append((s, qual, within))

        for s in self.api.common.values():
            if s.name not in seen:
                seen.add(s.name)
                walk(s, f"{self.api.name}{s.name}", self.api.versions)
        walk(self.api.request, self.api.request.name, self.api.versions)
        if self.api.response is not None:
            walk(self.api.response, self.api.response.name, self.api.versions)
        return result


def common_structs_in_dependency_order(api):
    """Shared structs, each after the shared structs it uses."""
    def uses(struct):
        for f in struct.fields:
            if f.struct is None:
                continue
            if f.shared:
                yield f.struct.name
            else:
                yield from uses(f.struct)

    ordered, visiting = [], set()

    def visit(s):
        if s in ordered:
            return
        if s.name in visiting:
            raise SchemaError(f"{api.file_stem}: shared struct {s.name} contains itself")
        visiting.add(s.name)
        for name in uses(s):
            visit(api.common[name])
        ordered.append(s)

    for s in api.common.values():
        visit(s)
    return ordered


def declare_messages(api, messages, out):
    """Declares the API's shared structs, prefixed with its name, then each
    message, inside which the shared structs go by their own names."""
    e = Emitter(api)
    declared = []
    for s in common_structs_in_dependency_order(api):
        common = Struct(f"{api.name}{s.name}")
        common.fields = s.fields
        body = []
        e.declare_struct(common, body, 0, set())
        # Shared structs used inside this one are visible by their own name.
        aliases = [f"  using {d} = {api.name}{d};" for d in declared]
        out += [body[0]] + aliases + body[1:]
        out.append("")
        declared.append(s.name)
    for s in messages:
        body = []
        e.declare_struct(s, body, 0, set())
        aliases = [f"  using {c.name} = {api.name}{c.name};" for c in api.common.values()]
        if aliases:
            body = [body[0]] + aliases + body[1:]
        out += body
        out.append("")


def header_preamble(schema):
    return [
        f"// Generated from protocol/schema/{schema} by protocol/gen/generate.py.",
        "// Do not edit: change the schema and rebuild.",
        "#pragma once",
        "",
        "#include <cstdint>",
        "#include <optional>",
        "#include <string>",
        "#include <vector>",
        "",
        '#include "protocol/codec/fields.h"',
        '#include "protocol/codec/randomizer.h"',
        "",
        "namespace runnel::protocol {",
        "",
    ]


def header(api):
    out = header_preamble(f"{api.file_stem}.schema")
    declare_messages(api, [api.request, api.response], out)
    flex_from = api.flexible.lo if api.flexible.lo < NEVER else "INT16_MAX"
    out += [
        f"struct {api.name}Api {{",
        f"  static constexpr int16_t key = {api.key};",
        f'  static constexpr const char* name = "{api.name}";',
        f"  static constexpr int16_t min_version = {api.versions.lo};",
        f"  static constexpr int16_t max_version = {api.versions.hi};",
        f"  static constexpr int16_t flexible_from = {flex_from};",
        "  static constexpr bool is_flexible(int16_t v) { return v >= flexible_from; }",
        f"  using Request = {api.request.name};",
        f"  using Response = {api.response.name};",
        "};",
        "",
        "}  // namespace runnel::protocol",
        "",
    ]
    return "\n".join(out)


def record_header(rec):
    out = header_preamble(f"coordinator/{rec.file_stem}.schema")
    for part in (rec.key, rec.value):
        declare_messages(part, [part.request], out)
    out += [
        f"struct {rec.name}Record {{",
        f"  static constexpr int16_t type = {rec.type};  // the key's leading int16",
        f"  using Key = {rec.key.name};",
        f"  using Value = {rec.value.name};",
        f"  static constexpr int16_t key_version = {rec.key.versions.hi};",
        f"  static constexpr int16_t value_min_version = {rec.value.versions.lo};",
        f"  static constexpr int16_t value_max_version = {rec.value.versions.hi};",
        "};",
        "",
        "}  // namespace runnel::protocol",
        "",
    ]
    return "\n".join(out)


def parts(schema):
    """The messages of a schema: an API's request and response, a record's key and value."""
    return [schema.key, schema.value] if isinstance(schema, Record) else [schema]


def definitions(schema, emitters):
    """A .cc file of definitions: each emitter runs on every struct."""
    where = "coordinator" if isinstance(schema, Record) else "messages"
    origin = "coordinator/" if isinstance(schema, Record) else ""
    out = [
        f"// Generated from protocol/schema/{origin}{schema.file_stem}.schema by protocol/gen/generate.py.",
        f'#include "protocol/{where}/{schema.file_stem}.h"',
        "",
        "namespace runnel::protocol {",
        "",
    ]
    for part in parts(schema):
        e = Emitter(part)
        for s, qual, within in e.all_structs():
            for emit in emitters:
                emit(e, s, qual, within, out)
    out += ["}  // namespace runnel::protocol", ""]
    return "\n".join(out)


def source(schema):
    return definitions(schema, [Emitter.encode_struct, Emitter.decode_struct])


def random_source(schema):
    return definitions(schema, [Emitter.randomize_struct])


def all_apis(apis):
    out = [
        "// Generated by protocol/gen/generate.py: every API Runnel's codec knows, in key order.",
        "#pragma once",
        "",
        "#include <tuple>",
        "",
    ]
    out += [f'#include "protocol/messages/{a.file_stem}.h"' for a in apis]
    out += [
        "",
        "namespace runnel::protocol {",
        "",
        "using AllApis = std::tuple<" + ", ".join(f"{a.name}Api" for a in apis) + ">;",
        "",
        "// X(ProduceApi) X(FetchApi) ...: one line of declarations per API.",
        "#define RUNNEL_FOR_EACH_API(X) " + " ".join(f"X({a.name}Api)" for a in apis),
        "",
        "// Calls f(Api{}) for every API, in key order.",
        "template <typename F>",
        "constexpr void for_each_api(F&& f) {",
        "  std::apply([&](auto... api) { (f(api), ...); }, AllApis{});",
        "}",
        "",
        "}  // namespace runnel::protocol",
        "",
    ]
    return "\n".join(out)


def all_records(records):
    out = [
        "// Generated by protocol/gen/generate.py: every coordinator record type Runnel knows, in type order.",
        "#pragma once",
        "",
        "#include <tuple>",
        "",
    ]
    out += [f'#include "protocol/coordinator/{r.file_stem}.h"' for r in records]
    out += [
        "",
        "namespace runnel::protocol {",
        "",
        "using AllRecords = std::tuple<" + ", ".join(f"{r.name}Record" for r in records) + ">;",
        "",
        "}  // namespace runnel::protocol",
        "",
    ]
    return "\n".join(out)


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w") as f:
        f.write(text)


def main():
    out_dir = sys.argv[1]
    msg_dir = os.path.join(out_dir, "protocol", "messages")
    rec_dir = os.path.join(out_dir, "protocol", "coordinator")
    os.makedirs(msg_dir, exist_ok=True)
    os.makedirs(rec_dir, exist_ok=True)
    apis, records = [], []
    try:
        for path in sorted(sys.argv[2:]):
            schema = parse_schema(path)
            (records if isinstance(schema, Record) else apis).append(schema)
    except SchemaError as err:
        sys.exit(f"generate.py: {err}")
    types = {}
    for r in records:
        if r.type in types:
            sys.exit(f"generate.py: record type {r.type} in both {types[r.type]} and {r.file_stem}")
        types[r.type] = r.file_stem
        write_if_changed(os.path.join(rec_dir, r.file_stem + ".h"), record_header(r))
        write_if_changed(os.path.join(rec_dir, r.file_stem + ".cc"), source(r))
        write_if_changed(os.path.join(rec_dir, r.file_stem + "_random.cc"), random_source(r))
    records.sort(key=lambda r: r.type)
    write_if_changed(os.path.join(rec_dir, "all_records.h"), all_records(records))
    keys = {}
    for a in apis:
        if a.key in keys:
            sys.exit(f"generate.py: key {a.key} in both {keys[a.key]} and {a.file_stem}")
        keys[a.key] = a.file_stem
    apis.sort(key=lambda a: a.key)
    for a in apis:
        write_if_changed(os.path.join(msg_dir, a.file_stem + ".h"), header(a))
        write_if_changed(os.path.join(msg_dir, a.file_stem + ".cc"), source(a))
        write_if_changed(os.path.join(msg_dir, a.file_stem + "_random.cc"), random_source(a))
    write_if_changed(os.path.join(msg_dir, "all_apis.h"), all_apis(apis))


if __name__ == "__main__":
    main()
