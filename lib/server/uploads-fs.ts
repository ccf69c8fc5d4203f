/** Paths under the uploads root: sub-directories allowed, escaping the root refused (rest-api.md §11). */
import { isAbsolute, join, normalize, relative, sep } from "node:path";
import { EngineError, ErrCode } from "../errors.ts";

/** The absolute path of upload `name`, or an error when it would leave `root`. */
export function safeUploadPath(root: string, name: string): string {
  if (name === "" || isAbsolute(name) || name.includes("\0")) throw new EngineError(`openat ${name}: path escapes from parent`, ErrCode.undefined);
  const p = normalize(join(root, name));
  const rel = relative(root, p);
  if (rel === "" || rel === ".." || rel.startsWith(".." + sep) || isAbsolute(rel)) throw new EngineError(`openat ${name}: path escapes from parent`, ErrCode.undefined);
  return p;
}
