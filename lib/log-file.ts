/**
 * eKuiper's rotating log file (`basic.fileLog`): lines go to `<dir>/stream.log.<YYYY-MM-DD_HH-MM-SS>`,
 * and `<dir>/stream.log` is a symlink to the current file (file-rotatelogs' layout). A new file
 * starts every `rotateTime` hours and when the current one reaches `rotateSize` bytes; old files
 * are removed beyond `rotateCount` files, or (when it is 0) once older than `maxAge` hours.
 */
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, statSync, symlinkSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

export interface RotationOptions {
  readonly dir: string;
  /** Hours per file (0: no time-based rotation). */
  readonly rotateTimeHours: number;
  /** Bytes per file (0: no size-based rotation). */
  readonly rotateSize: number;
  /** Files to keep, the current included (0: keep by age). */
  readonly rotateCount: number;
  /** Hours to keep files when rotateCount is 0 (0: forever). */
  readonly maxAgeHours: number;
  /** The clock (tests drive it). */
  readonly now?: () => number;
}

const BASE = "stream.log";
const pad = (n: number) => String(n).padStart(2, "0");

function stamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}_${pad(d.getHours())}-${pad(d.getMinutes())}-${pad(d.getSeconds())}`;
}

export class RotatingLog {
  private fd = -1;
  private size = 0;
  private rotateAt = Infinity;
  private seq = 0;
  private readonly now: () => number;

  constructor(private readonly o: RotationOptions) {
    this.now = o.now ?? Date.now;
    mkdirSync(o.dir, { recursive: true });
    this.open(false);
  }

  /** The path `stream.log` points to. */
  current = "";

  readonly write = (line: string): void => {
    const t = this.now();
    if (t >= this.rotateAt || (this.o.rotateSize > 0 && this.size > 0 && this.size + Buffer.byteLength(line) > this.o.rotateSize)) this.rotate();
    this.size += writeSync(this.fd, line);
  };

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  /** Opens the file of now: at start an existing one is appended to; a rotation always starts a new one. */
  private open(rotation: boolean): void {
    const t = this.now();
    let name = `${BASE}.${stamp(t)}`;
    // Two files in one second (a size rotation): a suffix keeps them apart.
    while (rotation && existsSync(join(this.o.dir, name))) name = `${BASE}.${stamp(t)}.${++this.seq}`;
    this.current = join(this.o.dir, name);
    this.fd = openSync(this.current, "a");
    this.size = fstatSync(this.fd).size;
    const period = this.o.rotateTimeHours * 3_600_000;
    this.rotateAt = period > 0 ? Math.floor(t / period) * period + period : Infinity;
    const link = join(this.o.dir, BASE);
    try {
      unlinkSync(link);
    } catch {
      // no link yet
    }
    symlinkSync(name, link);
    this.prune();
  }

  private rotate(): void {
    this.close();
    this.open(true);
  }

  private prune(): void {
    const files = readdirSync(this.o.dir)
      .filter((f) => f.startsWith(`${BASE}.`))
      .map((f) => ({ path: join(this.o.dir, f), mtime: statSync(join(this.o.dir, f)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime || b.path.localeCompare(a.path));
    const old =
      this.o.rotateCount > 0
        ? files.filter((f) => f.path !== this.current).slice(Math.max(0, this.o.rotateCount - 1))
        : this.o.maxAgeHours > 0
          ? files.filter((f) => f.path !== this.current && this.now() - f.mtime > this.o.maxAgeHours * 3_600_000)
          : [];
    for (const f of old) unlinkSync(f.path);
  }
}
