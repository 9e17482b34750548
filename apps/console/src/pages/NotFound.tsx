import { Link } from 'react-aria-components';
import { Card } from '../app/Shell.tsx';

export default function NotFound() {
  return (
    <Card title="Page not found">
      <p>There is no page at this address.</p>
      <Link href="/">Go to the targets</Link>
    </Card>
  );
}
