#!/usr/bin/env python3
"""Extracts upstream's TestControllerV2SyncCronJob table (cronjob_controllerv2_test.go, Kubernetes
v1.34.4) into JSON with the Go expressions evaluated: times as RFC 3339, durations in nanoseconds,
errors by kind. CronJobControllerSyncTableTest replays it against the Java syncCronJob.

  python3 synccases.py $(go env GOMODCACHE)/k8s.io/kubernetes@v1.34.4/pkg/controller/cronjob/cronjob_controllerv2_test.go \
    > ../../app/src/test/resources/cronjob/upstream-sync-cases.json
"""
import datetime
import json
import re
import sys

src = open(sys.argv[1]).read()
start = src.index('func TestControllerV2SyncCronJob(')
body = src[start:]
table = body[body.index('}{', body.index('testCases := map[string]struct {')) + 2:]

TIMES = {
    'justASecondBeforeTheHour()': '2016-05-19T09:59:59Z',
    'justAfterThePriorHour()': '2016-05-19T09:01:00Z',
    'justBeforeThePriorHour()': '2016-05-19T08:59:00Z',
    'justAfterTheHour()': '2016-05-19T10:01:00Z',
    'justAfterTheHourInZone(newYork)': '2016-05-19T10:01:00Z',  # ParseInLocation of a "Z" time: UTC
    'justBeforeTheHour()': '2016-05-19T09:59:00Z',
    'justBeforeTheNextHour()': '2016-05-19T10:59:00Z',
    'weekAfterTheHour()': '2016-05-26T10:00:00Z',
    'topOfTheHour()': '2016-05-19T10:00:00Z',
}
CONSTS = {'shortDead': 10, 'mediumDead': 2 * 60 * 60, 'longDead': 1000000, 'noDead': -12345}
STRINGS = {'errorSchedule': 'obvious error schedule', 'onTheHour': '0 * * * ?', 'everyHour': '@every 1h',
           '&errorTimeZone': 'bad timezone', '&newYork': 'America/New_York'}


def duration(expr):
    e = expr.replace('nextScheduleDelta', '100000000')
    e = e.replace('time.Hour', '3600000000000').replace('time.Minute', '60000000000')
    e = e.replace('time.Second', '1000000000').replace('time.Millisecond', '1000000')
    e = re.sub(r'time\.Duration\(', '(', e)
    for k, v in CONSTS.items():
        e = e.replace(k, str(v))
    if not re.fullmatch(r'[0-9+\-*() ]+', e):
        raise ValueError(expr)
    return eval(e)


def value(key, expr):
    expr = expr.strip().rstrip(',')
    if key in ('now', 'jobCreationTime', 'cronjobCreationTime', 'lastScheduleTime'):
        expr = expr.lstrip('*')
        m = re.fullmatch(r'(\w+\(\w*\))((?:\.Add\(.*?\))*)', expr)
        base = datetime.datetime.fromisoformat(TIMES[m.group(1)].replace('Z', '+00:00'))
        nanos = sum(duration(d) for d in re.findall(r'\.Add\((.*?\)?)\)(?=\.Add|$)', m.group(2)))
        t = base + datetime.timedelta(microseconds=nanos // 1000)
        frac = ('.%06d' % t.microsecond).rstrip('0') if t.microsecond else ''
        return t.strftime('%Y-%m-%dT%H:%M:%S') + frac + 'Z'
    if key == 'expectedRequeueDuration':
        return duration(expr)
    if key == 'deadline':
        return CONSTS[expr] if expr in CONSTS else int(expr)
    if key in ('schedule', 'timeZone', 'concurrencyPolicy'):
        if expr in STRINGS:
            return STRINGS[expr]
        if '+' in expr:
            return ''.join(value(key, part) for part in expr.split('+'))
        try:
            return json.loads(expr)
        except ValueError:
            raise ValueError(key + ": " + repr(expr))
    if key == 'successfulJobsHistoryLimit':
        return int(re.fullmatch(r'ptr\.To\[int32\]\((\d+)\)', expr).group(1))
    if key in ('jobCreateError', 'jobGetErr'):
        if 'NamespaceTerminatingCause' in expr:
            return 'NamespaceTerminating'
        m = re.match(r'&?errors\.(?:New)?(\w+)', expr)
        return m.group(1)
    if key == 'expectActive' or key == 'expectedWarnings':
        return int(expr)
    if expr in ('true', 'false'):
        return expr == 'true'
    raise ValueError(key + ': ' + expr)


cases = []
i = 0
name_re = re.compile(r'\s*"([^"]+)":\s*{')
while True:
    m = name_re.match(table, i)
    if not m:
        # skip comments and blank lines
        nl = table.find('\n', i)
        line = table[i:nl].strip()
        if line.startswith('//') or line == '':
            i = nl + 1
            continue
        break
    name = m.group(1)
    j = m.end()
    depth = 1
    while depth:
        c = table[j]
        depth += c == '{'
        depth -= c == '}'
        j += 1
    inner = table[m.end():j - 1]
    case = {'name': name}
    # split top-level "key: value," entries
    k = 0
    depth = 0
    entry = ''
    entries = []
    for c in inner:
        if c in '{([':
            depth += 1
        elif c in '})]':
            depth -= 1
        if (c == ',' or c == '\n') and depth == 0:
            if entry.strip():
                entries.append(entry.strip())
            entry = ''
        else:
            entry += c
    if entry.strip():
        entries.append(entry.strip())
    for e in entries:
        if e.startswith('//'):
            continue
        key, _, expr = e.partition(':')
        case[key.strip()] = value(key.strip(), expr)
    cases.append(case)
    i = j
    if table[i] == ',':
        i += 1

json.dump(cases, sys.stdout, indent=1)
print()
print(len(cases), 'cases', file=sys.stderr)
