/** Bun's bundler imports the stylesheet as text (`with { type: "text" }`). */
declare module "*.css" {
  const text: string;
  export default text;
}
