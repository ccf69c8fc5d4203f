/**
 * The compile budget's pre-scan of a `.proto` file (compile-budget.ts): one linear pass over the
 * text that counts what protobufjs would build — fields of each message, values of each enum,
 * declarations of the file, nesting of blocks — and throws a CompileBudgetError over any limit
 * before protobufjs sees the text. protobufjs adds a field in time linear in the fields already
 * in its message, so a message of n fields costs n² (8,000 fields held the loop 6 s); within the
 * limits the parse stays in tens of milliseconds. Syntax is not checked here: protobufjs reports
 * it with its own words.
 */
import { checkLimit, compileLimits } from "../value/compile-budget.ts";

interface Block {
  /** `message` (a group too), `enum`, `oneof`, `extend`, `service`, or `block` for any other `{ }` (option values, rpc bodies). */
  readonly kind: string;
  readonly name: string;
  /** Fields (values) counted so far: a oneof's go to its message. */
  count: number;
}

/** Statements inside a message or enum that declare nothing. */
const NOT_FIELDS = new Set(["option", "reserved", "extensions"]);
const KINDS = new Set(["message", "enum", "oneof", "extend", "service"]);
/** Blocks whose statements protobufjs adds one by one to one object: their count is limited. */
const HOLDS_FIELDS = new Set(["message", "enum", "extend", "block"]);

const isIdentStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdent = (c: number) => isIdentStart(c) || (c >= 48 && c <= 57) || c === 46;

/** Throws a CompileBudgetError when `text` (file `file`) passes a protobuf limit of the compile budget. */
export function scanProto(file: string, text: string): void {
  const limits = compileLimits();
  // Characters first: a string has at least as many UTF-8 bytes as characters, and at most 3 per character.
  if (text.length * 3 > limits.protoBytes) checkLimit("protoBytes", Buffer.byteLength(text), file, "bytes");
  const stack: Block[] = [{ kind: "file", name: file, count: 0 }];
  let declarations = 0;
  // The current statement's first three identifiers (`message W`, `int64 a`, `optional group G`).
  let first = "";
  let second = "";
  let third = "";
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 47 && text.charCodeAt(i + 1) === 47) {
      const nl = text.indexOf("\n", i);
      i = nl < 0 ? n : nl + 1;
    } else if (c === 47 && text.charCodeAt(i + 1) === 42) {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === 34 || c === 39) {
      i++;
      while (i < n && text.charCodeAt(i) !== c) i += text.charCodeAt(i) === 92 ? 2 : 1;
      i++;
      if (first === "") first = "\0";
    } else if (isIdentStart(c)) {
      const start = i;
      while (i < n && isIdent(text.charCodeAt(i))) i++;
      if (first === "") first = text.slice(start, i);
      else if (second === "") second = text.slice(start, i);
      else if (third === "") third = text.slice(start, i);
    } else if (c === 123) {
      // `{`: a block opens. A group (`[label] group G = 1 { … }`) is a field and a message at once.
      const group = first === "group" || second === "group";
      if (group) countField(stack);
      const kind = group ? "message" : KINDS.has(first) ? first : "block";
      if (kind === "message" || kind === "enum" || kind === "extend") declarations++;
      stack.push({ kind, name: group ? (first === "group" ? second : third) : kind === "block" ? first : second, count: 0 });
      checkLimit("protoDepth", stack.length - 1, file, "levels of nested blocks");
      first = second = third = "";
      i++;
    } else if (c === 125) {
      if (stack.length > 1) checkFields(stack.pop()!, file);
      first = second = third = "";
      i++;
    } else if (c === 59) {
      // `;`: a statement ends; in a message, oneof, enum or other block it declares a field (value) unless it is an option.
      const kind = stack[stack.length - 1]!.kind;
      if (first !== "" && !NOT_FIELDS.has(first) && (kind === "oneof" || HOLDS_FIELDS.has(kind))) {
        countField(stack);
        declarations++;
      }
      first = second = third = "";
      i++;
    } else {
      if (first === "" && c > 32) first = "\0";
      i++;
    }
  }
  // A block left open is protobufjs's syntax error; its fields still count.
  for (let k = stack.length - 1; k > 0; k--) checkFields(stack[k]!, file);
  checkLimit("protoDeclarations", declarations, file, "messages, enums, fields and values");
}

function checkFields(b: Block, file: string): void {
  if (HOLDS_FIELDS.has(b.kind)) checkLimit("protoFields", b.count, `${file}: ${b.kind} ${b.name}`, b.kind === "enum" ? "values" : b.kind === "block" ? "statements" : "fields");
}

/** One more field in the innermost block that holds fields (a oneof's fields are its message's). */
function countField(stack: Block[]): void {
  for (let k = stack.length - 1; k > 0; k--) {
    const b = stack[k]!;
    if (b.kind === "oneof") continue;
    if (HOLDS_FIELDS.has(b.kind)) b.count++;
    return;
  }
}
