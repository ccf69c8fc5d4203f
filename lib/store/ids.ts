/** Identifier validation for every stored object (rest-api.md §1.8); errors have code 1000. */
import { EngineError, ErrCode } from "../errors.ts";

const ID = /^[a-zA-Z0-9_-]+$/;

/** The eKuiper message for an invalid id, or undefined when `id` is acceptable. */
export function idError(id: string): string | undefined {
  if (id === "") return "id cannot be empty";
  if (id.trim() !== id) return `id '${id}' contains leading or trailing whitespace`;
  if (!ID.test(id)) return `id '${id}' contains invalid characters: only alphanumeric, hyphens and underscores are allowed`;
  return undefined;
}

export function validateId(id: string, code: number = ErrCode.undefined): void {
  const e = idError(id);
  if (e !== undefined) throw new EngineError(e, code);
}
