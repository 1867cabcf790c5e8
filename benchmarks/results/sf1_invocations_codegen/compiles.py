"""Classes compiled per `dbt run` process, from the processes' output with Spark's CodeGenerator
logging at INFO ("Code generated in N ms")."""
import re
import sys

s = open(sys.argv[1], errors="replace").read()
for part in s.split("\n$ ")[1:]:
    head = part.split("\n", 1)[0]
    sel = head.split("--select ")[1].split(" --project-dir")[0]
    ms = [float(x) for x in re.findall(r"Code generated in ([0-9.]+) ms", part)]
    print(f"{sel:32} {'--full-refresh' if '--full-refresh' in head else '              '} "
          f"classes {len(ms):4d}  compiling {sum(ms) / 1000:5.2f} s")
