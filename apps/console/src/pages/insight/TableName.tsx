import { Fragment } from 'react';

/** A `database.schema.table` name that may break after each dot on a narrow screen (long names are the rule). */
export function TableName({ name }: { name: string }) {
  const parts = name.split('.');
  return (
    <span className="insight-name">
      {parts.map((part, index) => (
        <Fragment key={index}>
          {part}
          {index < parts.length - 1 && (
            <>
              .<wbr />
            </>
          )}
        </Fragment>
      ))}
    </span>
  );
}
