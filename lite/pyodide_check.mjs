// ctxlab under Pyodide in Node (issue 19, item 3): `node lite/pyodide_check.mjs WHEELS CASES`.
//
// Loads Pyodide from the npm `pyodide` core package (lite/node_modules, `npm ci` in lite/),
// unpacks the pure-Python wheels in WHEELS (ctxlab's, built from the checkout, and
// filelock's) into its site-packages -- no micropip, no network -- and runs
// check_implementation on each build-it cell of CASES (JSON {"labs": {"11.1": {"right":
// code, "wrong": code}, ...}}), plus the hostile functions of the thread-free time limit.
// Prints one JSON object: the Python, whether threads exist, and the rows of each run.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { loadPyodide } from "pyodide";

const [wheels, cases] = process.argv.slice(2);
if (!wheels || !cases) {
  console.error("usage: node lite/pyodide_check.mjs WHEELS_DIR CASES_JSON");
  process.exit(2);
}
const started = Date.now();
const pyodide = await loadPyodide({ stdout: () => {}, stderr: (line) => console.error(line) });
const booted = Date.now();
pyodide.FS.mkdirTree("/wheels");
for (const name of readdirSync(wheels).filter((n) => n.endsWith(".whl"))) {
  pyodide.FS.writeFile(`/wheels/${name}`, readFileSync(join(wheels, name)));
}
pyodide.FS.writeFile("/cases.json", readFileSync(cases));
const out = pyodide.runPython(`
import glob, json, site, sys, time, zipfile

for wheel in sorted(glob.glob("/wheels/*.whl")):
    zipfile.ZipFile(wheel).extractall(site.getsitepackages()[0])

from ctxlab.lab import check_implementation
from ctxlab.lab import grading as g
from ctxlab.lab.grading import runner

def rows(report):
    return [[r.key, r.passed, r.detail_en] for r in report.results]

def run_cell(lab, code):
    namespace = {"__name__": "__main__"}
    exec(compile(code, f"<lab {lab} build-it cell>", "exec"), namespace)
    keyword = g.lab_keyword(lab)
    return rows(check_implementation(lab, **{keyword: namespace[keyword]}))

result = {
    "python": sys.version.split()[0],
    "platform": sys.platform,
    "threads": runner.threads_available(),
    "trace": runner.use_trace(),
    "heavy_modules": sorted(m for m in ("pandas", "matplotlib", "numpy", "ipywidgets") if m in sys.modules),
    "labs": {},
    "hostile": {},
}
cases = json.load(open("/cases.json"))
for lab, cells in cases["labs"].items():
    started = time.monotonic()
    result["labs"][lab] = {
        "right": run_cell(lab, cells["right"]),
        "wrong": run_cell(lab, cells["wrong"]),
        "seconds": round(time.monotonic() - started, 2),
    }

g.set_time_limit(1)

def endless(entries):
    while True:
        pass

def stubborn(entries):
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass

def recursing(entries):
    return recursing(entries)

def printing(entries):
    print("x" * 5_000_000)
    n = 0
    while True:
        print(n)
        n += 1

for name, function in [("endless", endless), ("stubborn", stubborn),
                       ("recursion", recursing), ("print", printing)]:
    started = time.monotonic()
    report = check_implementation("11.2", group_interactions=function)
    result["hostile"][name] = {"rows": rows(report), "seconds": round(time.monotonic() - started, 2)}
json.dumps(result)
`);
const parsed = JSON.parse(out);
parsed.boot_seconds = (booted - started) / 1000;
parsed.total_seconds = (Date.now() - started) / 1000;
console.log(JSON.stringify(parsed));
