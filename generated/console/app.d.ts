/** The built console script (`make ui`), imported `with { type: "file" }`: the path of the embedded file. Written by hand. */
declare const path: string;
export default path;
