import { useImperativeHandle, useMemo, useRef, type Ref } from 'react';

/** How a line is marked in the gutter: a glyph people read (never colour alone) and the words its tooltip says. */
export type LineMark = 'problem' | 'warning';
const MARK_GLYPH: Record<LineMark, string> = { problem: '✖', warning: '▲' };
const MARK_WORDS: Record<LineMark, string> = { problem: 'problem', warning: 'warning' };

export interface YamlEditorHandle {
  /** Moves the cursor to the start of `line`'s text (1-based), scrolled into view, the editor focused. */
  goToLine(line: number): void;
}

/**
 * A monospace text area for YAML with its line numbers beside it, and the lines that have a problem marked in the
 * gutter. Lines never wrap, so each number stays beside its line; Tab leaves the editor as anywhere else (YAML is
 * indented with spaces).
 */
export function YamlEditor({ id, value, onChange, marks, describedBy, handle }: { id: string; value: string; onChange: (value: string) => void; marks: ReadonlyMap<number, LineMark>; describedBy?: string; handle: Ref<YamlEditorHandle> }) {
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lineCount = useMemo(() => value.split('\n').length, [value]);
  useImperativeHandle(handle, () => ({ goToLine: (line) => area.current && moveToLine(area.current, line) }), []);
  return (
    <div className="set-editor">
      <div className="set-gutter" ref={gutter} aria-hidden="true">
        {Array.from({ length: lineCount }, (_, index) => {
          const mark = marks.get(index + 1);
          return (
            <div key={index} className={mark ? `set-line set-line-${mark}` : 'set-line'} title={mark ? `Line ${index + 1}: ${MARK_WORDS[mark]}` : undefined}>
              <span className="set-mark">{mark ? MARK_GLYPH[mark] : ''}</span>
              {index + 1}
            </div>
          );
        })}
      </div>
      <textarea
        id={id}
        ref={area}
        className="set-yaml"
        value={value}
        onChange={(event) => onChange(event.target.value)}
        onScroll={(event) => {
          if (gutter.current) gutter.current.scrollTop = event.currentTarget.scrollTop;
        }}
        aria-describedby={describedBy}
        wrap="off"
        spellCheck={false}
        autoCapitalize="off"
        autoCorrect="off"
        rows={18}
      />
    </div>
  );
}

/** The offset of the first non-blank character of `line` (1-based) in `text`, or the text's end past its last line. */
export function lineStart(text: string, line: number): number {
  const lines = text.split('\n');
  let offset = 0;
  for (let index = 0; index < Math.min(line - 1, lines.length - 1); index += 1) offset += (lines[index]?.length ?? 0) + 1;
  const content = lines[Math.min(line, lines.length) - 1] ?? '';
  return offset + (content.length - content.trimStart().length);
}

function moveToLine(area: HTMLTextAreaElement, line: number): void {
  const offset = lineStart(area.value, line);
  area.focus();
  area.setSelectionRange(offset, offset);
  // Browsers scroll a text area to its caret unevenly; place the line a third of the way down ourselves.
  const lineHeight = parseFloat(getComputedStyle(area).lineHeight) || 20;
  area.scrollTop = Math.max(0, (line - 1) * lineHeight - area.clientHeight / 3);
  area.scrollLeft = 0;
}
