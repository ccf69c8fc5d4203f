/** The built console script, imported `with { type: "file" }`: the path of the embedded file. */
declare const path: string;
export default path;
