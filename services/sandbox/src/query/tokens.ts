/** Sandbox queries: a lexer for SQL text (MySQL statements, PostgreSQL plan expressions) that knows strings, identifiers and comments. */

export type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'var' | 'punct';

export interface Token {
  kind: TokenKind;
  /** Identifiers: the name as written (quotes removed, escapes undone); strings: the content; others: the text. */
  value: string;
  /** Offset in the source, for messages and slicing. */
  at: number;
}

export interface Dialect {
  /** MySQL: `"..."` is a string unless ANSI_QUOTES; PostgreSQL: an identifier. */
  doubleQuoteIsIdentifier: boolean;
  backtickIdentifiers: boolean;
  /** MySQL without NO_BACKSLASH_ESCAPES; PostgreSQL only in `E'...'`. */
  backslashEscapes: boolean;
  /** MySQL `#` comments and `/*! ... *\/` comments whose content the server runs. */
  mysqlComments: boolean;
}

export const POSTGRES_PLAN: Dialect = { doubleQuoteIsIdentifier: true, backtickIdentifiers: false, backslashEscapes: false, mysqlComments: false };

export function mysqlDialect(sqlMode: string): Dialect {
  const modes = new Set(sqlMode.toUpperCase().split(','));
  return {
    doubleQuoteIsIdentifier: modes.has('ANSI_QUOTES') || modes.has('ANSI'),
    backtickIdentifiers: true,
    backslashEscapes: !modes.has('NO_BACKSLASH_ESCAPES'),
    mysqlComments: true,
  };
}

const WORD = /[\p{L}\p{N}_$]/u;
const NUMBER = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const TWO_CHAR_PUNCT = new Set(['::', ':=', '<=', '>=', '<>', '!=', '||', '&&', '->', '<<', '>>']);

/** Reads a quoted run starting at `start` (the opening quote); returns its content and the offset after the closing quote. */
function readQuoted(sql: string, start: number, quote: string, backslash: boolean): { value: string; end: number } {
  let value = '';
  let i = start + 1;
  while (i < sql.length) {
    const ch = sql[i] as string;
    if (backslash && ch === '\\' && i + 1 < sql.length) {
      value += sql[i + 1];
      i += 2;
    } else if (ch === quote) {
      if (sql[i + 1] === quote) {
        value += quote;
        i += 2;
      } else {
        return { value, end: i + 1 };
      }
    } else {
      value += ch;
      i += 1;
    }
  }
  return { value, end: sql.length };
}

/** The offset after a comment starting at `i`, or -1 when no comment starts there. */
function commentEnd(sql: string, i: number, dialect: Dialect): number {
  const ch = sql[i];
  const next = sql[i + 1];
  if (ch === '-' && next === '-') {
    // MySQL needs whitespace after `--` (`1--x` is 1 minus minus x); PostgreSQL does not.
    const after = sql[i + 2];
    if (dialect.mysqlComments && after !== undefined && !/[\s\p{Cc}]/u.test(after)) return -1;
    const eol = sql.indexOf('\n', i);
    return eol === -1 ? sql.length : eol + 1;
  }
  if (ch === '#' && dialect.mysqlComments) {
    const eol = sql.indexOf('\n', i);
    return eol === -1 ? sql.length : eol + 1;
  }
  if (ch === '/' && next === '*') {
    if (dialect.mysqlComments && (sql[i + 2] === '!' || (sql[i + 2] === 'M' && sql[i + 3] === '!'))) return -1;
    const close = sql.indexOf('*/', i + 2);
    return close === -1 ? sql.length : close + 2;
  }
  return -1;
}

/** The offset after the opening of a MySQL executable comment (`/*!50100 `, `/*M!100000 `), or -1. */
function executableCommentStart(sql: string, i: number): number {
  const match = /^\/\*M?!\d*/.exec(sql.slice(i, i + 12));
  return match ? i + match[0].length : -1;
}

function readWord(sql: string, i: number): number {
  let end = i;
  while (end < sql.length && WORD.test(sql[end] as string)) end += 1;
  return end;
}

/** Splits SQL into tokens; comments and whitespace are dropped, the content of MySQL executable comments is kept. */
export function tokenize(sql: string, dialect: Dialect): Token[] {
  const tokens: Token[] = [];
  let executable = false;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i] as string;
    if (/\s/.test(ch)) {
      i += 1;
      continue;
    }
    if (executable && ch === '*' && sql[i + 1] === '/') {
      executable = false;
      i += 2;
      continue;
    }
    const comment = commentEnd(sql, i, dialect);
    if (comment !== -1) {
      i = comment;
      continue;
    }
    if (dialect.mysqlComments && ch === '/' && sql[i + 1] === '*') {
      executable = true;
      i = executableCommentStart(sql, i);
      continue;
    }
    i = readToken(sql, i, dialect, tokens);
  }
  return tokens;
}

function readToken(sql: string, i: number, dialect: Dialect, tokens: Token[]): number {
  const ch = sql[i] as string;
  if (ch === "'" || (ch === '"' && !dialect.doubleQuoteIsIdentifier)) {
    const prev = tokens.at(-1);
    const escapeString = prev?.kind === 'word' && /^e$/i.test(prev.value) && prev.at === i - 1 && !dialect.mysqlComments;
    const { value, end } = readQuoted(sql, i, ch, dialect.backslashEscapes || escapeString);
    tokens.push({ kind: 'string', value, at: i });
    return end;
  }
  if (ch === '"' || (ch === '`' && dialect.backtickIdentifiers)) {
    const { value, end } = readQuoted(sql, i, ch, false);
    tokens.push({ kind: 'quoted', value, at: i });
    return end;
  }
  if (ch === '@') {
    let end = i + 1;
    while (sql[end] === '@') end += 1;
    end = readWord(sql, end);
    tokens.push({ kind: 'var', value: sql.slice(i, end), at: i });
    return end;
  }
  if (WORD.test(ch) || (ch === '.' && /\d/.test(sql[i + 1] ?? '') && !isQualifierDot(tokens))) {
    const end = readNumberOrWord(sql, i);
    const text = sql.slice(i, end);
    tokens.push({ kind: NUMBER.test(text) ? 'number' : 'word', value: text, at: i });
    return end;
  }
  const two = sql.slice(i, i + 2);
  if (TWO_CHAR_PUNCT.has(two)) {
    tokens.push({ kind: 'punct', value: two, at: i });
    return i + 2;
  }
  tokens.push({ kind: 'punct', value: ch, at: i });
  return i + 1;
}

/** A dot right after an identifier qualifies it (`t.1col`), it does not start a number. */
function isQualifierDot(tokens: Token[]): boolean {
  const prev = tokens.at(-1);
  return prev !== undefined && (prev.kind === 'word' || prev.kind === 'quoted');
}

function readNumberOrWord(sql: string, i: number): number {
  const numeric = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(sql.slice(i, i + 400));
  const wordEnd = readWord(sql, i);
  if (numeric && i + numeric[0].length >= wordEnd) return i + numeric[0].length;
  return wordEnd;
}

export const isIdentifier = (token: Token | undefined): boolean => token !== undefined && (token.kind === 'word' || token.kind === 'quoted');

export const isWord = (token: Token | undefined, ...words: string[]): boolean =>
  token !== undefined && token.kind === 'word' && words.includes(token.value.toUpperCase());

export const isPunct = (token: Token | undefined, value: string): boolean => token !== undefined && token.kind === 'punct' && token.value === value;
