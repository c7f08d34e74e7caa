#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Generate tests/abi/abi_manifest.inc from the distribution's libfabric headers.

fabsim's public headers must be binary- and source-compatible with libfabric
1.17. This script lists everything those headers define, taken from Debian's
libfabric-dev headers (the reference), as X-macro lines. tests/abi compiles the
list twice, once against our headers and once against Debian's, and compares.

Run by hand (the output is checked in; the build never runs this):

    python3 tests/abi/gen_abi_manifest.py            # rewrites abi_manifest.inc
    python3 tests/abi/gen_abi_manifest.py --check    # exit 1 if it is stale
    python3 tests/abi/gen_abi_manifest.py --extras api/include
                                # names our headers define that Debian's don't

Needs: clang (for -Xclang -ast-dump=json and -dM -E) and libfabric-dev
(/usr/include/rdma/fabric.h, fi_*.h, providers/fi_prov.h, providers/fi_log.h;
the kernel's rdma/*-abi.h and ib_user_* files are not libfabric's and are
ignored).

What is extracted, and the X-macro each becomes:
  ABI_CONST(NAME)              object-like macro with an integer value
  ABI_STRCONST(NAME)           object-like macro that is a string literal
  ABI_MACRO(NAME)              any other object-like macro (include guards,
                               attributes): must be #defined
  ABI_MACRO_FN(NAME, (ARGS))   function-like macro with its parameter count
                               (ARGS are placeholders): must be #defined
  ABI_ENUMERATOR(NAME)         enumeration constant (must not be a macro)
  ABI_ENUM(TAG)                named enum type (size)
  ABI_TYPEDEF(NAME, TYPE)      typedef (size and type)
  ABI_STRUCT(TAG) / ABI_UNION(TAG)
  ABI_FIELD(TAG, PATH, TYPE)   member; PATH may go into nested unnamed unions
                               ("device.cuda"); TYPE is libfabric's spelling
  ABI_FIELD_ANON(TAG, PATH)    member whose type is an unnamed struct/union
  ABI_FIELD_FLEX(TAG, PATH, TYPE)  flexible array member (offset only)
  ABI_FUNC(NAME, TYPE)         extern function declaration
  ABI_INLINE(NAME, TYPE)       static inline function
Used by the dispatch test (abi_dispatch.c):
  ABI_OPS_TABLE(TAG)           an ops table: size_t size + function pointers
  ABI_OPS_SLOT(TAG, SLOT, RETKIND, RETTYPE, (PARAMS), RECORDS)
                               a trap with libfabric's prototype for the slot
  ABI_INLINE_CALL(NAME, RETKIND, (ARGS))
                               a call of the inline wrapper with test values

Macros are matched to libfabric's files by reading the #define lines of those
files (comments stripped); which of them hold integers or strings is found by
compiling probes with clang.
"""

import argparse
import atexit
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "abi_manifest.inc")

MANIFEST_MACROS = [
    "ABI_CONST", "ABI_STRCONST", "ABI_MACRO", "ABI_MACRO_FN",
    "ABI_ENUMERATOR", "ABI_ENUM",
    "ABI_TYPEDEF", "ABI_STRUCT", "ABI_UNION", "ABI_FIELD", "ABI_FIELD_ANON",
    "ABI_FIELD_FLEX", "ABI_FUNC", "ABI_INLINE", "ABI_OPS_TABLE",
    "ABI_OPS_SLOT", "ABI_INLINE_CALL",
]

# Pointer parameters of inline wrappers that must be real fake objects (the
# wrapper dereferences them); the dispatch test provides fx.<kind>[i].
FAKE_KINDS = {
    "struct fid_fabric": "fabric",
    "struct fid_domain": "domain",
    "struct fid_ep": "ep",
    "struct fid_pep": "pep",
    "struct fid_av": "av",
    "struct fid_av_set": "av_set",
    "struct fid_mr": "mr",
    "struct fid_eq": "eq",
    "struct fid_cq": "cq",
    "struct fid_cntr": "cntr",
    "struct fid_wait": "wait",
    "struct fid_poll": "poll",
    "struct fid_mc": "mc",
    "struct fid_logging": "logging",
}


def die(msg):
    sys.stderr.write("gen_abi_manifest: " + msg + "\n")
    sys.exit(2)


def libfabric_headers(root):
    """libfabric's public headers under root (e.g. /usr/include), in the
    order a translation unit includes them."""
    rdma = os.path.join(root, "rdma")
    files = [os.path.join(rdma, "fabric.h"), os.path.join(rdma, "fi_errno.h")]
    files += sorted(f for f in glob.glob(os.path.join(rdma, "fi_*.h"))
                    if f not in files)
    files += [os.path.join(rdma, "providers", "fi_prov.h"),
              os.path.join(rdma, "providers", "fi_log.h")]
    for f in files:
        if not os.path.isfile(f):
            die("missing %s (is libfabric-dev installed?)" % f)
    return files


def rel(root, path):
    return os.path.relpath(path, root)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


class Ctx:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.headers = libfabric_headers(self.root)
        self.tmp = tempfile.mkdtemp(prefix="abi_manifest_")
        atexit.register(shutil.rmtree, self.tmp, True)
        self.includes = "".join('#include <%s>\n' % rel(self.root, h)
                                for h in self.headers)
        # With a non-standard root the -I must come before /usr/include.
        self.cflags = ["-x", "c", "-std=gnu11", "-I", self.root]

    def tu(self, name, body=""):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(self.includes + body)
        return path


# ---- Macros ----------------------------------------------------------------

def strip_comments(text):
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def file_macro_names(path):
    text = strip_comments(open(path).read()).replace("\\\n", " ")
    names = []
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", text,
                         re.M):
        if m.group(1) not in names:
            names.append(m.group(1))
    return names


def final_macros(ctx):
    """name -> (params or None, body) as defined after including all."""
    r = run(["clang"] + ctx.cflags + ["-dM", "-E", ctx.tu("dm.c")])
    if r.returncode:
        die("clang -dM -E failed:\n" + r.stderr)
    macros = {}
    for line in r.stdout.splitlines():
        m = re.match(r"#define ([A-Za-z_]\w*)(\(([^)]*)\))?(.*)$", line)
        if m:
            params = None
            if m.group(2) is not None:
                params = [p.strip() for p in m.group(3).split(",")
                          if p.strip()]
            macros[m.group(1)] = (params, m.group(4).strip())
    return macros


def probe(ctx, filename, names, fmt):
    """Names for which the probe line compiles, by dropping the lines that
    clang reports errors on until none are left."""
    alive = list(names)
    while alive:
        body = "".join(fmt.format(name=n, i=i) + "\n"
                       for i, n in enumerate(alive))
        path = ctx.tu(filename, "#line 100000\n" + body)
        r = run(["clang"] + ctx.cflags + ["-fsyntax-only", "-ferror-limit=0",
                                          "-w", path])
        bad = set()
        for line in r.stderr.splitlines():
            m = re.match(re.escape(path) + r":(\d+):\d+: (?:fatal )?error", line)
            if m:
                bad.add(int(m.group(1)) - 100000)
        if not bad:
            if r.returncode:
                die("probe %s failed without a line:\n%s" % (filename,
                                                              r.stderr))
            return alive
        alive = [n for i, n in enumerate(alive) if i not in bad]
    return alive


# ---- AST -------------------------------------------------------------------

class Ast:
    """Walks clang's JSON AST, tracking which file each declaration is in
    (the dumper writes "file" only when it changes)."""

    def __init__(self, ctx):
        r = run(["clang"] + ctx.cflags + ["-fsyntax-only", "-Xclang",
                                          "-ast-dump=json", ctx.tu("ast.c")])
        if r.returncode:
            die("clang -ast-dump=json failed:\n" + r.stderr)
        self.tree = json.loads(r.stdout)
        self.cur = None
        self.ours = set(os.path.realpath(h) for h in ctx.headers)

    def _locs(self, obj):
        """Visit location objects in the dumper's order, updating cur."""
        if isinstance(obj, dict):
            if "spellingLoc" in obj or "expansionLoc" in obj:
                self._locs(obj.get("spellingLoc"))
                self._locs(obj.get("expansionLoc"))
                return
            if "file" in obj:
                self.cur = obj["file"]
            for k in ("begin", "end"):
                if k in obj:
                    self._locs(obj[k])

    def walk(self, node, visit, depth=0):
        """Calls visit(node, file, depth) for each node in document order."""
        file_before = None
        if "loc" in node:
            self._locs(node["loc"])
            file_before = self.cur
            # An expansion location is where a macro-made declaration is.
            exp = node["loc"].get("expansionLoc")
            if exp and "file" in exp:
                file_before = exp["file"]
        if "range" in node:
            self._locs(node["range"])
        f = file_before if file_before is not None else self.cur
        descend = visit(node, os.path.realpath(f) if f else None, depth)
        for child in node.get("inner", []):
            if descend is False:
                # Keep the file tracking right even when not visiting.
                self.walk(child, lambda *_: None, depth + 1)
            else:
                self.walk(child, visit, depth + 1)


def split_params(s):
    """'a, b (*)(c, d), e' -> ['a', 'b (*)(c, d)', 'e']"""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_fn_type(t):
    """'ssize_t (struct fid_ep *, void *)' -> ('ssize_t', [params]).
    Also accepts pointer-to-function spellings 'R (*)(P)'."""
    t = t.strip()
    if not t.endswith(")"):
        die("not a function type: " + t)
    depth = 0
    for i in range(len(t) - 1, -1, -1):
        if t[i] == ")":
            depth += 1
        elif t[i] == "(":
            depth -= 1
            if depth == 0:
                break
    ret, params = t[:i].strip(), t[i + 1:-1].strip()
    if ret.endswith("(*)"):
        ret = ret[:-3].strip()
    params = [] if params in ("", "void") else split_params(params)
    return ret, params


class Resolver:
    """Desugars typedef names using every TypedefDecl in the AST."""

    def __init__(self, tree):
        self.map = {}
        for n in tree.get("inner", []):
            if n.get("kind") == "TypedefDecl":
                self.map[n["name"]] = n["type"]["qualType"]

    def resolve(self, t):
        t = t.strip()
        for _ in range(20):
            base = re.sub(r"^const\s+", "", t)
            stars = ""
            m = re.match(r"^(.*?)\s*(\*[\s\*const]*)$", base)
            if m:
                base, stars = m.group(1).strip(), " " + m.group(2).strip()
            if base in self.map:
                t = self.map[base] + stars
            else:
                return t
        return t

    def kind(self, t):
        r = self.resolve(t)
        if r == "void":
            return "V"
        if r.endswith("*") or "(*)" in r:
            return "P"
        if r in ("_Bool", "bool"):
            return "B"
        return "I"


class Manifest:
    def __init__(self):
        self.consts, self.strconsts, self.macros = [], [], []
        self.fn_macros = []        # (name, parameter count)
        self.enumerators, self.enums, self.typedefs = [], [], []
        self.records = []          # (tag, is_union, [lines], file)
        self.funcs, self.inlines = [], []
        self.ops_tables = []       # (tag, [(slot, fnptr type)])
        self.inline_sigs = []      # (name, ret, [(pname, ptype, desugared)])


def collect_ast(ctx, ast, man):
    tree = ast.tree

    def fields(rec, prefix, out):
        anon = None
        for f in rec.get("inner", []):
            if f["kind"] == "RecordDecl" and not f.get("name"):
                anon = f
                continue
            if f["kind"] != "FieldDecl":
                continue
            qt = f["type"]["qualType"]
            name = f.get("name")
            if f.get("isBitfield"):
                die("bit-field %s not supported" % name)
            if not name:            # C11 anonymous member: fields lift up
                fields(anon, prefix, out)
                continue
            path = prefix + name
            if "(unnamed" in qt or "(anonymous" in qt:
                out.append(("ANON", path, None))
                fields(anon, path + ".", out)
            elif qt.endswith("[]"):
                out.append(("FLEX", path, qt))
            else:
                out.append(("FIELD", path, qt))

    def visit(node, f, depth):
        if f not in ast.ours:
            return True
        k = node.get("kind")
        if k == "EnumDecl":
            if node.get("name"):
                man.enums.append(node["name"])
            for c in node.get("inner", []):
                if c.get("kind") == "EnumConstantDecl":
                    man.enumerators.append(c["name"])
            return False
        if k == "RecordDecl":
            if node.get("name") and node.get("completeDefinition"):
                out = []
                fields(node, "", out)
                man.records.append((node["name"], node["tagUsed"] == "union",
                                    out, f))
                is_ops = (out and out[0][1] == "size" and len(out) > 1 and
                          all(o[0] == "FIELD" and "(*)" in o[2]
                              for o in out[1:]))
                if is_ops:
                    man.ops_tables.append((node["name"],
                                           [(o[1], o[2]) for o in out[1:]]))
            return True     # named records may nest inside
        if k == "TypedefDecl" and depth == 1:
            man.typedefs.append((node["name"], node["type"]["qualType"]))
            return False
        if k == "FunctionDecl" and depth == 1:
            t = node["type"]["qualType"]
            if node.get("storageClass") == "static" and node.get("inline"):
                man.inlines.append((node["name"], t))
                params = [(p.get("name", ""), p["type"]["qualType"],
                           p["type"].get("desugaredQualType",
                                         p["type"]["qualType"]))
                          for p in node.get("inner", [])
                          if p.get("kind") == "ParmVarDecl"]
                man.inline_sigs.append((node["name"], parse_fn_type(t)[0],
                                        params))
            elif node["name"] not in [n for n, _ in man.funcs]:
                man.funcs.append((node["name"], t))
            return False
        return True

    ast.walk(tree, visit)


def collect_macros(ctx, man):
    names = []
    for h in ctx.headers:
        for n in file_macro_names(h):
            if n not in names:
                names.append(n)
    final = final_macros(ctx)
    missing = [n for n in names if n not in final]
    object_like = [n for n in names
                   if n in final and final[n][0] is None and final[n][1]]
    ints = probe(ctx, "probe_int.c", object_like,
                 '_Static_assert((({name}) | 0) == (({name}) | 0), "");')
    rest = [n for n in object_like if n not in ints]
    strs = probe(ctx, "probe_str.c", rest,
                 "static const char abi_probe_{i}[] = {name};")
    for n in names:
        if n not in final:
            continue
        if n in ints:
            man.consts.append(n)
        elif n in strs:
            man.strconsts.append(n)
        elif final[n][0] is not None:
            man.fn_macros.append((n, len(final[n][0])))
        else:
            man.macros.append(n)
    return missing


# ---- Dispatch test lines ---------------------------------------------------

def sentinel_value(kind_t, pos):
    """A distinctive, harmless value for an integer parameter at pos."""
    if kind_t in ("int", "short", "long", "long long", "signed char", "char"):
        return "%d" % (pos + 2)
    if kind_t in ("unsigned char",):
        return "0x%x" % (0x20 + pos)
    if kind_t in ("unsigned short",):
        return "0x%x" % (0x1600 + pos)
    if kind_t in ("unsigned int",):
        return "0x%xU" % (0x32000000 + pos)
    if kind_t.startswith("enum "):
        return "%d" % (pos + 1)
    if kind_t in ("unsigned long", "unsigned long long"):
        return "0xA5%02X00000000005AULL" % pos
    die("no test value for integer type %s" % kind_t)


def inline_call_line(res, name, ret, params):
    args, seen = [], {}
    for pos, (pname, ptype, desugared) in enumerate(params):
        r = res.resolve(ptype)
        base = re.sub(r"^const\s+", "", r).rstrip(" *")
        is_ptr = r.endswith("*")
        if is_ptr and base in FAKE_KINDS and r.count("*") == 1:
            kind = FAKE_KINDS[base]
            idx = seen.get(kind, 0)
            seen[kind] = idx + 1
            args.append("ABI_FAKE(%s, %d)" % (kind, idx))
        elif is_ptr and base == "struct fid" and r.count("*") == 1 and pos == 0:
            args.append("ABI_FAKE_FID")
        elif is_ptr:
            args.append("((%s)ABI_SENTINEL(%d))" % (ptype, pos))
        else:
            args.append("((%s)%s)" % (ptype, sentinel_value(r, pos)))
    rk = res.kind(ret)
    return "ABI_INLINE_CALL(%s, %s, (%s))" % (name, rk, ", ".join(args))


def ops_slot_line(res, tag, slot, fnptr):
    ret, params = parse_fn_type(fnptr)
    decl, recs = [], []
    for i, p in enumerate(params):
        if p == "...":
            die("variadic slot %s.%s" % (tag, slot))
        decl.append("%s a%d" % (p, i))
        k = res.kind(p)
        recs.append("ABI_REC_%s(a%d)" % ("P" if k == "P" else "I", i))
    return "ABI_OPS_SLOT(%s, %s, %s, %s, (%s), %s)" % (
        tag, slot, res.kind(ret), ret, ", ".join(decl) or "void",
        " ".join(recs) or "ABI_REC_NONE")


# ---- Output ----------------------------------------------------------------

def render(ctx, man, missing, version):
    res = Resolver(man.ast_tree)
    L = []
    w = L.append
    w("/* Generated by tests/abi/gen_abi_manifest.py from %s. Do not edit:" %
      version)
    w(" * rerun the script. Every name libfabric 1.17's public headers define,")
    w(" * as X-macros; see the script for what each macro means. Define the ones")
    w(" * you need before including this file; the rest expand to nothing. */")
    w("")
    for m in MANIFEST_MACROS:
        w("#ifndef %s" % m)
        w("#define %s(...)" % m)
        w("#define ABI_MANIFEST_UNDEF_%s" % m)
        w("#endif")
    w("")
    w("/* Headers read: %s */" % ", ".join(rel(ctx.root, h)
                                          for h in ctx.headers))
    if missing:
        w("/* #defined only in branches not taken by default: %s */" %
          ", ".join(missing))
    w("")
    w("/* ---- Macros with integer values (%d) */" % len(man.consts))
    L += ["ABI_CONST(%s)" % n for n in man.consts]
    w("")
    w("/* ---- Macros with string values (%d) */" % len(man.strconsts))
    L += ["ABI_STRCONST(%s)" % n for n in man.strconsts]
    w("")
    w("/* ---- Other macros: include guards, attributes (%d) */"
      % len(man.macros))
    L += ["ABI_MACRO(%s)" % n for n in man.macros]
    w("")
    w("/* ---- Function-like macros (%d) */" % len(man.fn_macros))
    L += ["ABI_MACRO_FN(%s, (%s))" % (n, ", ".join("a%d" % i
                                                  for i in range(k)))
          for n, k in man.fn_macros]
    w("")
    w("/* ---- Enumeration constants (%d) and named enums (%d) */" %
      (len(man.enumerators), len(man.enums)))
    L += ["ABI_ENUMERATOR(%s)" % n for n in man.enumerators]
    L += ["ABI_ENUM(%s)" % n for n in man.enums]
    w("")
    w("/* ---- Typedefs (%d) */" % len(man.typedefs))
    L += ["ABI_TYPEDEF(%s, %s)" % t for t in man.typedefs]
    w("")
    nfields = sum(len(r[2]) for r in man.records)
    w("/* ---- Structures and unions (%d) with their members (%d) */" %
      (len(man.records), nfields))
    for tag, is_union, fields, f in man.records:
        w("ABI_%s(%s)" % ("UNION" if is_union else "STRUCT", tag))
        for kind, path, qt in fields:
            if kind == "ANON":
                w("ABI_FIELD_ANON(%s, %s)" % (tag, path))
            elif kind == "FLEX":
                w("ABI_FIELD_FLEX(%s, %s, %s)" % (tag, path, qt))
            else:
                w("ABI_FIELD(%s, %s, %s)" % (tag, path, qt))
    w("")
    w("/* ---- Extern functions (%d) */" % len(man.funcs))
    L += ["ABI_FUNC(%s, %s)" % f for f in man.funcs]
    w("")
    w("/* ---- Static inline functions (%d) */" % len(man.inlines))
    L += ["ABI_INLINE(%s, %s)" % f for f in man.inlines]
    w("")
    nslots = sum(len(s) for _, s in man.ops_tables)
    w("/* ---- Ops tables (%d) and their slots (%d), for the dispatch test */"
      % (len(man.ops_tables), nslots))
    for tag, slots in man.ops_tables:
        w("ABI_OPS_TABLE(%s)" % tag)
        for slot, fnptr in slots:
            w(ops_slot_line(res, tag, slot, fnptr))
    w("")
    w("/* ---- One call of each inline function, for the dispatch test */")
    for name, ret, params in man.inline_sigs:
        w(inline_call_line(res, name, ret, params))
    w("")
    for m in MANIFEST_MACROS:
        w("#ifdef ABI_MANIFEST_UNDEF_%s" % m)
        w("#undef %s" % m)
        w("#undef ABI_MANIFEST_UNDEF_%s" % m)
        w("#endif")
    return "\n".join(L) + "\n"


def extract(root):
    ctx = Ctx(root)
    man = Manifest()
    ast = Ast(ctx)
    man.ast_tree = ast.tree
    collect_ast(ctx, ast, man)
    missing = collect_macros(ctx, man)
    return ctx, man, missing


def debian_version():
    r = run(["dpkg-query", "-W", "-f=${Version}", "libfabric-dev"])
    v = r.stdout.strip() if r.returncode == 0 else "unknown"
    return "Debian's libfabric-dev %s headers" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default="/usr/include",
                    help="include directory holding libfabric's rdma/")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--check", action="store_true",
                    help="compare with --out instead of writing it")
    ap.add_argument("--extras", metavar="INCLUDE_DIR",
                    help="list names defined under INCLUDE_DIR/rdma that "
                         "libfabric does not define")
    a = ap.parse_args()

    ctx, man, missing = extract(a.root)
    consts = set(man.consts + man.strconsts + man.macros)
    if "FI_MINOR_VERSION" not in consts:
        die("FI_MINOR_VERSION not found")

    if a.extras:
        octx, oman, _ = extract(a.extras)
        def names(m):
            return (set(m.consts + m.strconsts + m.macros + m.enumerators) |
                    set(n for n, _ in m.fn_macros) |
                    set("enum " + e for e in m.enums) |
                    set("struct " + r[0] for r in m.records) |
                    set(f[0] for f in m.funcs + m.inlines) |
                    set(t[0] for t in m.typedefs))
        extra = sorted(names(oman) - names(man))
        print("\n".join(extra) if extra else "(none)")
        return 0

    text = render(ctx, man, missing, debian_version())
    if a.check:
        old = open(a.out).read() if os.path.exists(a.out) else ""
        if old != text:
            print("%s is stale; rerun %s" % (a.out, sys.argv[0]))
            return 1
        print("up to date")
        return 0
    with open(a.out, "w") as f:
        f.write(text)
    nfields = sum(len(r[2]) for r in man.records)
    print("wrote %s: %d integer macros, %d string macros, %d other macros, "
          "%d function-like macros, "
          "%d enumerators, %d enums, %d typedefs, %d structs/unions, "
          "%d fields, %d functions, %d inlines, %d ops tables" % (
              a.out, len(man.consts), len(man.strconsts), len(man.macros),
              len(man.fn_macros),
              len(man.enumerators), len(man.enums), len(man.typedefs),
              len(man.records), nfields, len(man.funcs), len(man.inlines),
              len(man.ops_tables)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
