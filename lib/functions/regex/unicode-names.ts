/**
 * `\p{name}` / `\P{name}` of Go's regexp (Go 1.25): general categories (short names and their
 * long aliases), Any, ASCII, Assigned, LC, Cn and the script names of Go's `unicode.Scripts`,
 * looked up loosely (case-insensitive, ignoring spaces, `_` and `-`), rendered as class atoms that
 * re2js reads with Go's meaning (re2js knows only exact names, and its `C` includes `Cn`).
 */

/** The class atoms (re2js syntax, usable inside `[…]`) of a named class and of its complement. */
export interface UnicodeClass {
  readonly pos: readonly string[];
  readonly neg: readonly string[];
}

const GENERAL: ReadonlyArray<readonly [string, ...string[]]> = [
  ["Cc", "Control", "cntrl"],
  ["Cf", "Format"],
  ["Cn", "Unassigned"],
  ["Co", "Private_Use"],
  ["Cs", "Surrogate"],
  ["L", "Letter"],
  ["LC", "Cased_Letter"],
  ["Ll", "Lowercase_Letter"],
  ["Lm", "Modifier_Letter"],
  ["Lo", "Other_Letter"],
  ["Lt", "Titlecase_Letter"],
  ["Lu", "Uppercase_Letter"],
  ["M", "Mark", "Combining_Mark"],
  ["Mc", "Spacing_Mark"],
  ["Me", "Enclosing_Mark"],
  ["Mn", "Nonspacing_Mark"],
  ["N", "Number"],
  ["Nd", "Decimal_Number", "digit"],
  ["Nl", "Letter_Number"],
  ["No", "Other_Number"],
  ["P", "Punctuation", "punct"],
  ["Pc", "Connector_Punctuation"],
  ["Pd", "Dash_Punctuation"],
  ["Pe", "Close_Punctuation"],
  ["Pf", "Final_Punctuation"],
  ["Pi", "Initial_Punctuation"],
  ["Po", "Other_Punctuation"],
  ["Ps", "Open_Punctuation"],
  ["S", "Symbol"],
  ["Sc", "Currency_Symbol"],
  ["Sk", "Modifier_Symbol"],
  ["Sm", "Math_Symbol"],
  ["So", "Other_Symbol"],
  ["Z", "Separator"],
  ["Zl", "Line_Separator"],
  ["Zp", "Paragraph_Separator"],
  ["Zs", "Space_Separator"],
];

// Go's unicode.Scripts (Unicode 15.0).
const SCRIPTS =
  "Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali " +
  "Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian " +
  "Chakma Cham Cherokee Chorasmian Common Coptic Cuneiform Cypriot Cypro_Minoan Cyrillic Deseret " +
  "Devanagari Dives_Akuru Dogra Duployan Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic Georgian " +
  "Glagolitic Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Han Hangul Hanifi_Rohingya " +
  "Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inherited Inscriptional_Pahlavi " +
  "Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kawi Kayah_Li Kharoshthi " +
  "Khitan_Small_Script Khmer Khojki Khudawadi Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian " +
  "Lydian Mahajani Makasar Malayalam Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin " +
  "Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani " +
  "Myanmar Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong Ogham " +
  "Ol_Chiki Old_Hungarian Old_Italic Old_North_Arabian Old_Permic Old_Persian Old_Sogdian " +
  "Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage Osmanya Pahawh_Hmong Palmyrene Pau_Cin_Hau " +
  "Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham " +
  "SignWriting Sinhala Sogdian Sora_Sompeng Soyombo Sundanese Syloti_Nagri Syriac Tagalog Tagbanwa " +
  "Tai_Le Tai_Tham Tai_Viet Takri Tamil Tangsa Tangut Telugu Thaana Thai Tibetan Tifinagh Tirhuta " +
  "Toto Ugaritic Vai Vithkuqi Wancho Warang_Citi Yezidi Yi Zanabazar_Square";

/** Unicode TR18 loose matching, as Go 1.25 does it. */
export function looseName(name: string): string {
  return name.replace(/[ _-]/g, "").toLowerCase();
}

function simple(prop: string): UnicodeClass {
  return { pos: [`\\p{${prop}}`], neg: [`\\P{${prop}}`] };
}

function build(): Map<string, UnicodeClass> {
  const m = new Map<string, UnicodeClass>();
  const add = (names: readonly string[], c: UnicodeClass) => {
    for (const n of names) m.set(looseName(n), c);
  };
  for (const [short, ...long] of GENERAL) add([short, ...long], simple(short));
  // Go's C (Other) is Cc|Cf|Co|Cs — without the unassigned code points JS's \p{C} includes.
  add(["C", "Other"], {
    pos: ["\\p{Cc}", "\\p{Cf}", "\\p{Co}", "\\p{Cs}"],
    neg: ["\\p{L}", "\\p{M}", "\\p{N}", "\\p{P}", "\\p{S}", "\\p{Z}", "\\p{Cn}"],
  });
  add(["Any"], simple("Any"));
  add(["ASCII"], { pos: ["\\x00-\\x7F"], neg: ["\\x{80}-\\x{10FFFF}"] });
  add(["Assigned"], { pos: ["\\P{Cn}"], neg: ["\\p{Cn}"] });
  for (const s of SCRIPTS.split(" ")) add([s], simple(s));
  return m;
}

let table: Map<string, UnicodeClass> | undefined;

/** The class named `name`, or undefined when Go does not know it. */
export function unicodeClass(name: string): UnicodeClass | undefined {
  table ??= build();
  return table.get(looseName(name));
}
