#!/usr/bin/env python3
"""Checks berth's layering: includes and CMake link lists against the layer table.

The table is the one in docs/architecture.md between the markers
`<!-- layers:begin -->` and `<!-- layers:end -->`: one row per folder,

    | `folder/` | `berth_library` or - | may use: folders below it, space-separated, or - |

A folder whose code is built into more than one library (an object library shared with a
static program, say) names them all, `berth_a` `berth_b`; the first is the one other
folders link.

A folder may use what it lists and, transitively, what those use. The check fails when

  1. a source file (.cc/.h) includes a repository header of a folder its own folder may
     not use (a higher layer, or a sibling such as another job kind); test files
     (*_test.cc, *_fuzzer.cc, bench/, tests/) may also include the test-support folders
     (a folder named testing/);
  2. a source folder is not in the table, or a table row names a folder that does not exist;
  3. a library's sources live outside its folder, or a .cc file of a folder with a
     library is not one of its sources or of a test target;
  4. a library links a berth_* library of a folder it may not use, or does not reach
     (directly or through what it links) a folder whose headers its sources include, or
     links a berth_* library none of whose headers its sources include.

Usage: check_layers.py [REPO_ROOT]   (exit 0: clean; 1: violations, listed one a line)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))


def tracked_files():
    try:
        out = subprocess.check_output(["git", "-C", ROOT, "ls-files", "--cached", "--others", "--exclude-standard"],
                                      stderr=subprocess.DEVNULL).decode()
        return [f for f in out.split("\n") if f and os.path.exists(os.path.join(ROOT, f))]
    except (subprocess.CalledProcessError, FileNotFoundError):
        files = []
        for d, dirs, names in os.walk(ROOT):
            dirs[:] = [x for x in dirs if not x.startswith(".") and x != "build"]
            files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
        return files


# {folder: every library the table names for it}, filled by read_table.
ALL_LIBS = {}


def read_table():
    text = open(os.path.join(ROOT, "docs/architecture.md"), encoding="utf-8").read()
    m = re.search(r"<!-- layers:begin -->(.*?)<!-- layers:end -->", text, re.S)
    if not m:
        sys.exit("check_layers: docs/architecture.md has no <!-- layers:begin --> ... <!-- layers:end --> table")
    rows = {}
    for line in m.group(1).splitlines():
        raw = [c.strip() for c in line.strip().strip("|").split("|")]
        cells = [c.strip("`") for c in raw]
        if len(cells) < 3 or not cells[0].endswith("/"):
            continue
        folder = cells[0].rstrip("/")
        # The folder's library, or several (`a` `b`, the first the one others link).
        names = re.findall(r"`([^`]+)`", raw[1])
        lib = names[0] if names else None
        uses = [u.strip("`").rstrip("/") for u in cells[2].split() if u not in ("-", "—")]
        rows[folder] = (lib, uses)
        ALL_LIBS[folder] = names
    return rows


def closure(rows, folder, seen=None):
    seen = set() if seen is None else seen
    for u in rows.get(folder, (None, []))[1]:
        if u not in seen:
            seen.add(u)
            closure(rows, u, seen)
    return seen


def owner(rows, path):
    best = None
    for folder in rows:
        if path.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def is_test_file(path):
    base = os.path.basename(path)
    return (base.endswith("_test.cc") or base.endswith("_fuzzer.cc") or path.startswith("bench/")
            or path.startswith("tests/") or "/testing/" in "/" + path or "/fuzz/" in "/" + path)


def is_testing_folder(folder):
    return folder == "testing" or folder.endswith("/testing")


def parse_cmake(files):
    """{library: (folder of the CMake file, [source paths], [linked berth libs])} and test sources."""
    libs, test_sources = {}, set()
    for f in files:
        if not (f.endswith("CMakeLists.txt") or f.endswith(".cmake")):
            continue
        d = os.path.dirname(f)
        text = re.sub(r"#[^\n]*", "", open(os.path.join(ROOT, f), encoding="utf-8").read())

        def resolve(src):
            for var in ("${CMAKE_CURRENT_LIST_DIR}", "${CMAKE_CURRENT_SOURCE_DIR}"):
                if src.startswith(var + "/"):
                    return os.path.normpath(os.path.join(d, src[len(var) + 1:]))
            return os.path.normpath(os.path.join(d, src))

        for m in re.finditer(r"add_library\(\s*(\S+)([^)]*)\)", text):
            srcs = [resolve(s) for s in m.group(2).split() if s.endswith(".cc")]
            libs.setdefault(m.group(1), [d, [], []])[1].extend(srcs)
        for m in re.finditer(r"target_link_libraries\(\s*(\S+)([^)]*)\)", text):
            linked = [x for x in m.group(2).split() if x.startswith("berth_")]
            if m.group(1) in libs:
                libs[m.group(1)][2].extend(linked)
        for m in re.finditer(r"(?:berth_test|berth_bench|add_executable)\(\s*\S+([^)]*)\)", text):
            for s in m.group(1).split():
                if s.endswith(".cc"):
                    test_sources.add(resolve(s))
    return libs, test_sources


def main():
    rows = read_table()
    files = tracked_files()
    errors = []
    for folder in rows:
        if not os.path.isdir(os.path.join(ROOT, folder)):
            errors.append(f"docs/architecture.md: the layer table names {folder}/, which does not exist")
    for folder, (_, uses) in rows.items():
        for u in uses:
            if u not in rows:
                errors.append(f"docs/architecture.md: {folder}/ may use {u}/, which is not in the table")
    sources = [f for f in files if f.endswith((".cc", ".h"))]
    includes = {}
    for f in sources:
        o = owner(rows, f)
        if o is None:
            errors.append(f"{f}: its folder is not in the layer table of docs/architecture.md")
            continue
        allowed = closure(rows, o) | {o}
        text = open(os.path.join(ROOT, f), encoding="utf-8", errors="replace").read()
        includes[f] = []
        for n, line in enumerate(text.splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m or not os.path.exists(os.path.join(ROOT, m.group(1))):
                continue
            t = owner(rows, m.group(1))
            if t is None:
                continue
            includes[f].append(t)
            if t in allowed:
                continue
            if is_test_file(f) and is_testing_folder(t):
                continue
            why = "a higher layer" if o in closure(rows, t) else "a folder beside it"
            errors.append(f"{f}:{n}: includes {m.group(1)} of {t}/, {why}: {o}/ may use only "
                          f"{' '.join(sorted(allowed - {o}))} (docs/architecture.md)" if allowed - {o} else
                          f"{f}:{n}: includes {m.group(1)} of {t}/, {why}: {o}/ may use nothing (docs/architecture.md)")

    libs, test_sources = parse_cmake(files)
    lib_folder = {lib: folder for folder in rows for lib in ALL_LIBS.get(folder, [])}
    for lib, folder in lib_folder.items():
        if lib not in libs:
            errors.append(f"docs/architecture.md: {folder}/ names library {lib}, which no CMake file defines")
    for lib, (cmake_dir, srcs, linked) in sorted(libs.items()):
        if lib not in lib_folder:
            if lib.startswith("berth_"):
                errors.append(f"{cmake_dir}: library {lib} is not in the layer table of docs/architecture.md")
            continue
        folder = lib_folder[lib]
        for s in srcs:
            if owner(rows, s) != folder:
                errors.append(f"{lib}: source {s} lives outside {folder}/")
        allowed = closure(rows, folder)
        used = set()
        for s in srcs:
            used |= set(includes.get(s, []))
            header = s[:-3] + ".h"
            used |= set(includes.get(header, []))
        used.discard(folder)
        reach = set()
        stack = list(linked)
        while stack:
            x = stack.pop()
            if x in lib_folder and lib_folder[x] not in reach:
                reach.add(lib_folder[x])
                stack += libs.get(x, [None, [], []])[2]
        for x in linked:
            if x not in lib_folder:
                continue
            if lib_folder[x] not in allowed:
                errors.append(f"{lib}: links {x} ({lib_folder[x]}/), which {folder}/ may not use")
            elif lib_folder[x] not in used:
                errors.append(f"{lib}: links {x}, but no source of {folder}/ includes a header of {lib_folder[x]}/")
        for u in sorted(used):
            if u in allowed and rows[u][0] and u not in reach:
                errors.append(f"{lib}: its sources include headers of {u}/ but it does not link {rows[u][0]}")
    lib_sources = {s for (_, srcs, _) in libs.values() for s in srcs}
    for f in sources:
        if not f.endswith(".cc") or f in lib_sources or f in test_sources or is_test_file(f):
            continue
        o = owner(rows, f)
        if o and rows[o][0]:
            errors.append(f"{f}: not a source of {rows[o][0]} (its folder's library) nor of a test target")
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} violation(s) of the layering in docs/architecture.md")
        return 1
    print(f"check_layers: {len(sources)} files follow the layering of {len(rows)} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
