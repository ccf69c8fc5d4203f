export { CACHE_LIMIT, cachedPatterns, compileGoRegex, goRegex, GoRegex } from "./compile.ts";
export { compileLikePattern } from "./like.ts";
export { goFindString, goFindStringSubmatch, goMatchString } from "./match.ts";
export { goReplaceAllString } from "./replace.ts";
export { callSiteRegex } from "./call-site.ts";
