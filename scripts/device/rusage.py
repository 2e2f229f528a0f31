import os, subprocess, sys
# rusage.py LABEL CMD...: runs CMD, then prints one line: LABEL, the context switches (voluntary, involuntary) and
# CPU-seconds (user, sys) of all its threads, and its bench rows of 4 KiB and 64 KiB as "size avg p50 p99" (µs).
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
out = p.stdout.read()
_, status, ru = os.wait4(p.pid, 0)
rows = [l for l in out.splitlines() if l.startswith('4096 ') or l.startswith('65536 ')]
print(sys.argv[1], 'vol', ru.ru_nvcsw, 'invol', ru.ru_nivcsw, 'user %.2f sys %.2f' % (ru.ru_utime, ru.ru_stime), '|', ' ; '.join(' '.join(r.split()[i] for i in (0, 3, 8, 9)) for r in rows))
