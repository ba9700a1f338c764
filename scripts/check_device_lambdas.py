#!/usr/bin/env python3
"""Checks on the host the rules that nvcc imposes on device lambdas.

KOKKOS_LAMBDA is a plain `[=]` on host backends and an extended `__host__ __device__` lambda
on CUDA, where nvcc refuses it in places a host compiler accepts (CUDA Programming Guide,
"Extended Lambda Restrictions"). This script parses the translation units of a configured
build with libclang (through its compile_commands.json) and reports every KOKKOS_LAMBDA or
KOKKOS_CLASS_LAMBDA of the source tree that nvcc would refuse:

  constructor       inside a constructor or destructor
  access            inside a member function that is private or protected, or of a class
                    that is private or protected in the class that encloses it
  deduced-return    inside a function whose return type is deduced (auto, decltype(auto))
  nested            inside another device lambda, or inside a generic lambda
  local-class       inside a member function of a class local to a function
  generic           a device lambda with auto parameters
  constexpr-if      a variable of the enclosing function first used (so first captured) inside
                    an `if constexpr` of the lambda

usage: check_device_lambdas.py BUILD_DIR [FILE ...] [--expect-annotations]
Without FILE, checks every translation unit of BUILD_DIR/compile_commands.json; with FILEs,
checks those, with their flags in the database (or those of its first entry). Prints one line per
finding (file:line: rule: explanation) and exits with 1 when it finds any. With
--expect-annotations, each KOKKOS_LAMBDA line of the FILEs ends with a comment naming the rule
nvcc breaks there, or "accepted" (or follows a line holding only that comment); the exit
status is 0 when the findings are exactly those.
"""

import argparse
import functools
import json
import multiprocessing
import os
import shlex
import sys

try:
    import clang.cindex as ci
except ImportError:  # pragma: no cover
    sys.exit("check_device_lambdas.py: needs libclang's Python bindings (Debian: python3-clang-14)")

K = ci.CursorKind
FUNCTIONS = {K.FUNCTION_DECL, K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR, K.FUNCTION_TEMPLATE,
             K.CONVERSION_FUNCTION}
CLASSES = {K.CLASS_DECL, K.STRUCT_DECL, K.UNION_DECL, K.CLASS_TEMPLATE,
           K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION}
DEVICE_LAMBDA_MACROS = (b"KOKKOS_LAMBDA", b"KOKKOS_CLASS_LAMBDA")


class Checker:
    def __init__(self, source_dir):
        self.source_dir = os.path.realpath(source_dir)
        self.texts = {}
        self.findings = set()
        self.checked = set()  # (file, offset) of every device lambda seen

    def text(self, path):
        if path not in self.texts:
            with open(path, "rb") as f:  # libclang's offsets count bytes
                self.texts[path] = f.read()
        return self.texts[path]

    def ours(self, cursor):
        f = cursor.location.file
        return f is not None and os.path.realpath(f.name).startswith(self.source_dir + os.sep)

    def is_device_lambda(self, lam):
        start = lam.extent.start
        if start.file is None:
            return False
        return self.text(start.file.name).startswith(DEVICE_LAMBDA_MACROS, start.offset)

    @staticmethod
    def is_generic(lam):
        for child in lam.get_children():
            if child.kind == K.PARM_DECL and "auto" in child.type.spelling.split():
                return True
            if child.kind == K.TEMPLATE_TYPE_PARAMETER:
                return True
        return False

    def report(self, lam, rule, why):
        loc = lam.extent.start
        path = os.path.relpath(os.path.realpath(loc.file.name), self.source_dir)
        self.findings.add((path, loc.line, rule, why))

    def check(self, lam, ancestors):
        if self.is_generic(lam):
            self.report(lam, "generic", "a device lambda cannot take auto parameters")
        self.check_constexpr_if(lam)
        # Ancestors from the innermost outwards, up to the enclosing function.
        function = None
        for a in reversed(ancestors):
            if a.kind == K.LAMBDA_EXPR:
                if self.is_device_lambda(a):
                    self.report(lam, "nested", "a device lambda cannot be inside another one")
                elif self.is_generic(a):
                    self.report(lam, "nested", "a device lambda cannot be inside a generic lambda")
            elif a.kind in FUNCTIONS:
                function = a
                break
        if function is None:
            return
        name = function.spelling
        owner = function.semantic_parent
        is_member = owner is not None and owner.kind in CLASSES
        if function.kind in (K.CONSTRUCTOR, K.DESTRUCTOR) or (
                is_member and (name == owner.spelling or name.startswith("~"))):
            self.report(lam, "constructor",
                        f"the enclosing function {owner.spelling}::{name} is a constructor or "
                        "destructor")
            return
        if self.deduced_return(function):
            self.report(lam, "deduced-return",
                        f"the enclosing function {name} has a deduced return type")
        if is_member:
            access = function.canonical.access_specifier
            if access in (ci.AccessSpecifier.PRIVATE, ci.AccessSpecifier.PROTECTED):
                self.report(lam, "access",
                            f"the enclosing member function {owner.spelling}::{name} is "
                            f"{access.name.lower()}")
            cls = owner
            while cls is not None and cls.kind in CLASSES:
                parent = cls.semantic_parent
                if parent is not None and parent.kind in CLASSES and cls.access_specifier in (
                        ci.AccessSpecifier.PRIVATE, ci.AccessSpecifier.PROTECTED):
                    self.report(lam, "access",
                                f"the class {cls.spelling} is "
                                f"{cls.access_specifier.name.lower()} in {parent.spelling}")
                if parent is not None and (parent.kind in FUNCTIONS or parent.kind == K.LAMBDA_EXPR):
                    self.report(lam, "local-class",
                                f"the class {cls.spelling} is local to the function "
                                f"{parent.spelling}")
                    break
                cls = parent

    def check_constexpr_if(self, lam):
        """Reports the lambda when a variable it captures (a local or parameter of an enclosing
        function) is used inside one of its `if constexpr` statements and not before it."""
        begin, end = lam.extent.start.offset, lam.extent.end.offset
        uses, statements = [], []

        def captured(decl):
            if decl is None or decl.kind not in (K.VAR_DECL, K.PARM_DECL):
                return False
            if decl.location.file is None or lam.extent.start.file is None:
                return False
            inside = (decl.location.file.name == lam.extent.start.file.name
                      and begin <= decl.location.offset < end)
            parent = decl.semantic_parent
            local = parent is not None and (parent.kind in FUNCTIONS or
                                            parent.kind == K.LAMBDA_EXPR)
            return not inside and (local or decl.kind == K.PARM_DECL)

        def visit(cursor):
            for child in cursor.get_children():
                if child.kind == K.DECL_REF_EXPR and captured(child.referenced):
                    uses.append((child.extent.start.offset, child.referenced.get_usr() or
                                 (child.referenced.spelling, child.referenced.location.offset)))
                elif child.kind == K.IF_STMT:
                    tokens = [t.spelling for t in child.get_tokens()][:2]
                    if tokens == ["if", "constexpr"]:
                        statements.append((child.extent.start.offset, child.extent.end.offset))
                visit(child)

        visit(lam)
        for first, last in statements:
            before = {key for offset, key in uses if offset < first}
            if {key for offset, key in uses if first <= offset < last} - before:
                self.report(lam, "constexpr-if",
                            "a variable is first captured inside `if constexpr` (nvcc refuses it)")
                return

    @staticmethod
    def deduced_return(function):
        """Whether the function's declared return type is auto or decltype(auto) with no
        trailing return type (read from its tokens: a template's is not known uninstantiated)."""
        tokens = [t.spelling for t in function.get_tokens()]
        if function.spelling.split("<")[0] not in tokens:
            return False
        name = tokens.index(function.spelling.split("<")[0])
        head = tokens[:name]
        if "template" in head:  # skip the template parameter list
            depth, i = 0, head.index("template") + 1
            while i < len(head):
                depth += {"<": 1, ">": -1, ">>": -2}.get(head[i], 0)
                i += 1
                if depth <= 0:
                    break
            head = head[i:]
        head = [t for t in head if t not in ("static", "inline", "constexpr", "virtual", "friend",
                                             "KOKKOS_INLINE_FUNCTION", "KOKKOS_FUNCTION")]
        if head[:1] != ["auto"] and head[:3] != ["decltype", "(", "auto"]:
            return False
        depth, i = 0, name + 1  # the parameter list, then a trailing return type or not
        while i < len(tokens):
            depth += {"(": 1, ")": -1}.get(tokens[i], 0)
            i += 1
            if depth == 0:
                break
        rest = tokens[i:]
        for t in rest:
            if t in ("{", ";", "="):
                return True
            if t == "->":
                return False
        return True

    def walk(self, cursor, ancestors):
        for child in cursor.get_children():
            if child.location.file is not None and not self.ours(child):
                continue
            if child.kind == K.LAMBDA_EXPR and self.is_device_lambda(child):
                self.checked.add((child.extent.start.file.name, child.extent.start.offset))
                self.check(child, ancestors)
            ancestors.append(child)
            self.walk(child, ancestors)
            ancestors.pop()


def arguments(entry):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    kept, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c", "-MF", "-MT", "-MQ"):
            skip = a != "-c"
            continue
        if a == entry["file"] or a.startswith("-f") and "sanitize" in a or a.startswith("-O"):
            continue
        kept.append(a)
    return kept


def check_unit(source_dir, unit):
    """The findings in one translation unit (run in a worker process)."""
    path, args = unit
    tu = ci.Index.create().parse(path, args=args + ["-Wno-everything"])
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error]
    if errors:
        return set(), set(), f"check_device_lambdas.py: libclang cannot parse {path}: {errors[0]}"
    checker = Checker(source_dir)
    checker.walk(tu.cursor, [])
    return checker.findings, checker.checked, None


def annotations(path):
    """{line: rule} of the KOKKOS_LAMBDA lines of a file of cases: the comment ending the line,
    or the comment alone on the line before ("accepted": no rule)."""
    expected = {}
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        code, _, comment = line.partition("//")
        if "KOKKOS_LAMBDA" not in code:
            continue
        if not comment.strip() and number > 1 and lines[number - 2].strip().startswith("//"):
            comment = lines[number - 2].strip()[2:]
        rule = comment.strip()
        if not rule:
            raise SystemExit(f"{path}:{number}: a KOKKOS_LAMBDA case without its verdict")
        if rule != "accepted":
            expected[number] = rule
    return expected


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("files", nargs="*")
    parser.add_argument("--source-dir", default=os.path.join(os.path.dirname(__file__), ".."))
    parser.add_argument("--expect-annotations", action="store_true")
    options = parser.parse_args()
    database = os.path.join(options.build_dir, "compile_commands.json")
    if not os.path.exists(database):
        sys.exit(f"check_device_lambdas.py: no {database} (configure with "
                 "CMAKE_EXPORT_COMPILE_COMMANDS=ON)")
    with open(database) as f:
        entries = json.load(f)
    if not entries:
        sys.exit(f"check_device_lambdas.py: {database} is empty")
    known = {}
    for entry in entries:
        path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
        if path.endswith((".cpp", ".cc", ".cxx")):
            known.setdefault(path, arguments(entry))
    if options.files:
        units = [(os.path.realpath(p), known.get(os.path.realpath(p), arguments(entries[0])))
                 for p in options.files]
    else:
        units = list(known.items())
    source_dir = os.path.realpath(options.source_dir)
    findings, checked = set(), set()
    with multiprocessing.Pool(min(len(units), os.cpu_count() or 1)) as pool:
        for unit_findings, unit_checked, error in pool.imap_unordered(
                functools.partial(check_unit, source_dir), units):
            if error:
                sys.exit(error)
            findings |= unit_findings
            checked |= unit_checked
    for path, line, rule, why in sorted(findings):
        print(f"{path}:{line}: {rule}: {why}")
    print(f"check_device_lambdas.py: {len(units)} translation units, {len(checked)} device "
          f"lambdas, {len(findings)} that nvcc would refuse", file=sys.stderr)
    if not checked:
        print("check_device_lambdas.py: no KOKKOS_LAMBDA found: nothing was checked", file=sys.stderr)
        return 1
    if options.expect_annotations:
        found = {(os.path.realpath(os.path.join(source_dir, p)), line): rule
                 for p, line, rule, _ in findings}
        expected = {(path, line): rule for path, _ in units
                    for line, rule in annotations(path).items()}
        wrong = sorted(set(found.items()) ^ set(expected.items()))
        for (path, line), rule in wrong:
            side = "expected" if expected.get((path, line)) == rule else "found"
            print(f"{path}:{line}: {side} only: {rule}")
        return 1 if wrong else 0
    return 1 if findings else 0

if __name__ == "__main__":
    sys.exit(main())
