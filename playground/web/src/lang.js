// Phobos highlighting for CodeMirror: a stream tokenizer that follows the
// lexer (compiler/core/src/syntax/token.rs): keywords, types, numbers,
// comments (with `// check` and `// dims:` lines marked), annotations.
import { StreamLanguage } from '@codemirror/language';

const KEYWORDS = new Set(['fn', 'kernel', 'let', 'var', 'for', 'in', 'bitcast']);
const TYPES = new Set([
  'tensor', 'tile', 'i32', 'u32', 'f32', 'bool', 'f16', 'f64', 'i64', 'u64',
]);
const ATOMS = new Set(['true', 'false', 'ctx']);

export const phobos = StreamLanguage.define({
  name: 'phobos',
  token(stream) {
    if (stream.eatSpace()) return null;
    if (stream.match('//')) {
      const directive = stream.match(/\s*(check |dims:)/, false);
      stream.skipToEnd();
      return directive ? 'meta' : 'comment';
    }
    if (stream.match(/^@[A-Za-z_]\w*/)) return 'annotation';
    if (stream.match(/^(0[xX][0-9a-fA-F_]+|[0-9][0-9_]*(\.[0-9][0-9_]*)?([eE][+-]?[0-9]+)?)/)) {
      return 'number';
    }
    if (stream.match(/^[A-Za-z_]\w*/)) {
      const w = stream.current();
      if (KEYWORDS.has(w)) return 'keyword';
      if (TYPES.has(w)) return 'typeName';
      if (ATOMS.has(w)) return 'atom';
      if (stream.match(/^\s*\(/, false)) return 'variableName.function';
      return 'variableName';
    }
    if (stream.match(/^(\.\.|:\+|==|!=|<=|>=|<<|>>|&&|\|\||[-+*/%<>=!&|^~:])/)) return 'operator';
    stream.next();
    return 'punctuation';
  },
  languageData: { commentTokens: { line: '//' } },
});
