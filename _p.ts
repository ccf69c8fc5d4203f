import protobuf from "protobufjs";
const file = (msgs: number, n: number) => `syntax = "proto3"; ` + Array.from({length: msgs}, (_, m) => `message W${m} { ${Array.from({length:n},(_, i)=>`int64 f${i} = ${i+1};`).join(" ")} }`).join("\n");
const run = (msgs: number, n: number) => {
  const src = file(msgs, n);
  let t = performance.now();
  const root = new protobuf.Root();
  protobuf.parse(src, root, { keepCase: true });
  root.resolveAll();
  const tp = performance.now() - t; t = performance.now();
  const ty = root.lookupType("W0");
  ty.decode(ty.encode({f1: 1}).finish());
  const td = performance.now() - t;
  return `${msgs}x${n} (${(src.length/1024).toFixed(0)} KiB): parse ${tp.toFixed(1)} codec ${td.toFixed(1)}`;
};
run(1, 300); run(1, 300);
for (const [m, n] of [[1,250],[1,500],[1,1000],[1,2000],[8,500],[4,1000],[1000,4],[4000,1], [10, 500]]) console.log(run(m, n));
