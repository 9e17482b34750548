import type { Usage } from './query.ts';
import { chartDays, chartScale, chartSummary, dayWords, formatCount, periodWords, type ChartDay } from './format.ts';

/** The days under the chart: the first, the middle and the last of the period. */
function axisDays(days: readonly ChartDay[]): ChartDay[] {
  if (days.length <= 2) return [...days];
  return [days[0]!, days[Math.floor((days.length - 1) / 2)]!, days.at(-1)!];
}

function barWords(day: ChartDay): string {
  return day.count === null ? `${dayWords(day.date)}: still to come` : `${dayWords(day.date)}: ${formatCount(day.count)}`;
}

/**
 * Completed envelopes per day of the period as a bar chart: one image with a summary in words for screen readers,
 * and the same numbers as a table behind "Show the numbers for each day".
 */
export function DailyChart({ usage }: { usage: Usage }) {
  const days = chartDays(usage.daily, usage.periodStart, usage.periodEnd);
  const top = chartScale(days);
  const summary = chartSummary(days);
  const counted = days.filter((day) => day.count !== null);
  return (
    <section className="panel billing-card billing-daily" aria-labelledby="billing-daily">
      <div className="billing-card-head">
        <h2 id="billing-daily" className="billing-eyebrow">
          Completed envelopes per day
        </h2>
        <p className="muted small">{periodWords(usage.periodStart, usage.periodEnd)} (UTC)</p>
      </div>
      <p id="billing-daily-summary" className="billing-chart-summary muted">
        {summary}
      </p>
      <div className="billing-chart" role="img" aria-labelledby="billing-daily" aria-describedby="billing-daily-summary">
        <div className="billing-chart-scale" aria-hidden="true">
          <span>{formatCount(top)}</span>
          <span>0</span>
        </div>
        <div className="billing-chart-plot">
          <div className="billing-chart-bars" style={{ gridTemplateColumns: `repeat(${days.length}, minmax(0, 1fr))` }}>
            {days.map((day) => (
              <div key={day.date} className={day.count === null ? 'billing-bar-slot billing-bar-future' : 'billing-bar-slot'} title={barWords(day)}>
                {day.count !== null && day.count > 0 && <div className="billing-bar" style={{ height: `${(day.count / top) * 100}%` }} />}
              </div>
            ))}
          </div>
          <div className="billing-chart-axis" aria-hidden="true">
            {axisDays(days).map((day) => (
              <span key={day.date}>{dayWords(day.date)}</span>
            ))}
          </div>
        </div>
      </div>
      {counted.length > 0 && (
        <details className="billing-chart-table">
          <summary>Show the numbers for each day</summary>
          <div className="table-wrap">
            <table className="table">
              <caption className="visually-hidden">Completed envelopes per day, {periodWords(usage.periodStart, usage.periodEnd)} (UTC)</caption>
              <thead>
                <tr>
                  <th scope="col">Day (UTC)</th>
                  <th scope="col" className="billing-number">
                    Completed envelopes
                  </th>
                </tr>
              </thead>
              <tbody>
                {counted.map((day) => (
                  <tr key={day.date}>
                    <th scope="row">{dayWords(day.date, { year: true })}</th>
                    <td className="billing-number">{formatCount(day.count ?? 0)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      )}
    </section>
  );
}
