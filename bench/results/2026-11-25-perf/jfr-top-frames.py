import sys, re, collections
# usage: jfragg.py samples.txt [from_hh:mm:ss.mmm to_hh:mm:ss.mmm]
txt=open(sys.argv[1]).read()
lo=sys.argv[2] if len(sys.argv)>2 else None; hi=sys.argv[3] if len(sys.argv)>3 else None
evs=txt.split("jdk.ExecutionSample {")[1:]
self_c=collections.Counter(); incl=collections.Counter(); threads=collections.Counter(); pk=collections.Counter()
n=0
for e in evs:
    m=re.search(r'startTime = (\S+)',e); t=m.group(1)
    if lo and t<lo: continue
    if hi and t>hi: continue
    n+=1
    th=re.search(r'sampledThread = "([^"]*)"',e); th=th.group(1) if th else "?"
    threads[re.sub(r'\d+','N',th)]+=1
    frames=[l.strip() for l in e.split("stackTrace = [")[1].split("\n  ]")[0].splitlines() if l.strip() and l.strip()!="..."]
    frames=[re.sub(r'\s+line:.*','',f) for f in frames]
    if frames: self_c[frames[0]]+=1
    seen=set()
    for f in frames:
        if f not in seen: incl[f]+=1; seen.add(f)
    # package of top non-JDK frame
    for f in frames:
        if not f.startswith(("java.","jdk.","sun.")):
            pk[".".join(f.split(".")[:3])]+=1; break
    else: pk["(jdk only)"]+=1
print("samples",n)
for title,c,k in (("threads",threads,12),("self",self_c,20),("top non-JDK package",pk,15),("inclusive",incl,45)):
    print("--",title)
    for f,v in c.most_common(k): print(f"{v:5d} {100*v/n:5.1f}% {f}")
