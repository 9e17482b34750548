/** The strata CLI: the `Examples:` block printed after a command's help. */

/** `[command line, what it does]` pairs as an aligned block for commander's `addHelpText('after', ...)`. */
export function examples(...lines: Array<[string, string?]>): string {
  const width = Math.max(0, ...lines.filter(([, what]) => what).map(([command]) => command.length));
  const text = lines.map(([command, what]) => (what ? `  ${command.padEnd(width)}  # ${what}` : `  ${command}`));
  return `\nExamples:\n${text.join('\n')}`;
}
