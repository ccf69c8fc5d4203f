/** LIKE (sql §5.7): the pattern becomes eKuiper's anchored Go regexp, compiled once per pattern text. */
import { RowError } from "../../errors.ts";
import { compileLikeSource } from "../../sql/like.ts";
import { CACHE_LIMIT, goRegex, type GoRegex } from "./compile.ts";
import { Lru } from "./lru.ts";

const likeCache = new Lru<GoRegex | RowError>(CACHE_LIMIT);

/** The full-match Go regexp of a LIKE pattern; throws RowError `invalid LIKE pattern: <Go error>`. */
export function compileLikePattern(pattern: string): GoRegex {
  let r = likeCache.get(pattern);
  if (r === undefined) {
    try {
      r = goRegex(compileLikeSource(pattern));
    } catch (e) {
      if (!(e instanceof RowError)) throw e;
      r = new RowError(`invalid LIKE pattern: ${e.message}`);
    }
    likeCache.set(pattern, r);
  }
  if (r instanceof RowError) throw r;
  return r;
}
