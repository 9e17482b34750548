import { useState } from 'react';
import { Button, Checkbox } from 'react-aria-components';
import { useNavigate } from 'react-router';
import { diffPath } from './insight-model.ts';
import './insight.css';

/** The backups picked to compare, at most two: picking a third lets go of the one picked first. */
export function useComparePicks() {
  const [picked, setPicked] = useState<readonly string[]>([]);
  const toggle = (id: string, on: boolean) => setPicked((now) => (on ? [...now.filter((p) => p !== id), id].slice(-2) : now.filter((p) => p !== id)));
  return { picked, toggle };
}

/** A backup row's checkbox: pick it as one of the two to compare. */
export function CompareCheckbox({ moment, picked, onChange }: { moment: string; picked: boolean; onChange: (on: boolean) => void }) {
  return (
    <Checkbox className="checkbox insight-pick" isSelected={picked} onChange={onChange} aria-label={`Compare the backup of ${moment}`}>
      <span className="insight-box" aria-hidden="true" />
    </Checkbox>
  );
}

/** What is picked so far, and the button that opens the diff of the two. */
export function CompareBar({ namespace, name, picked }: { namespace: string; name: string; picked: readonly string[] }) {
  const navigate = useNavigate();
  const [a, b] = picked;
  return (
    <div className="insight-compare">
      <p aria-live="polite" className="muted small">
        {picked.length === 0 ? 'Tick two backups to see what changed between them.' : picked.length === 1 ? 'One backup ticked: tick another to compare.' : 'Two backups ticked.'}
      </p>
      <Button className="button" isDisabled={!a || !b} onPress={() => a && b && navigate(diffPath(namespace, name, a, b))}>
        Compare backups
      </Button>
    </div>
  );
}
