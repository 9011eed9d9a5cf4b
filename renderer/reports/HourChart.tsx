// Sales by hour of the day as a bar chart, drawn by React as SVG (no chart library): one bar per
// hour, its height the hour's total, the hour under it; each bar names itself (a <title>) and the
// whole chart has a text alternative, read from the same numbers as the table beside it.

import type { SalesReport } from '../../electron/api/terminal-api.ts';
import { formatCents } from '../money/money.ts';

const WIDTH = 720;
const HEIGHT = 220;
const AXIS = 24;
const TOP = 16;

export function HourChart(props: { byHour: SalesReport['byHour'] }) {
  const { byHour } = props;
  const max = Math.max(...byHour.map((h) => h.totalCents), 0);
  const slot = WIDTH / byHour.length;
  const busiest = byHour.filter((h) => h.count > 0);
  const description = busiest.length
    ? `Vendas por hora: ${busiest.map((h) => `${h.hour}h ${formatCents(h.totalCents)} em ${h.count} venda(s)`).join('; ')}`
    : 'Vendas por hora: nenhuma venda no período';
  return (
    <svg className="hour-chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={description}>
      <line x1={0} y1={HEIGHT - AXIS} x2={WIDTH} y2={HEIGHT - AXIS} className="axis" />
      {byHour.map((h, i) => {
        const height = max === 0 ? 0 : Math.round(((HEIGHT - AXIS - TOP) * h.totalCents) / max);
        const x = i * slot + slot * 0.15;
        return (
          <g key={h.hour}>
            {height > 0 && (
              <rect className="bar" x={x} y={HEIGHT - AXIS - height} width={slot * 0.7} height={height}>
                <title>{`${String(h.hour).padStart(2, '0')}h: ${formatCents(h.totalCents)} (${h.count} venda${h.count === 1 ? '' : 's'})`}</title>
              </rect>
            )}
            {i % 2 === 0 && (
              <text x={i * slot + slot / 2} y={HEIGHT - 6} textAnchor="middle" className="tick">
                {h.hour}h
              </text>
            )}
          </g>
        );
      })}
    </svg>
  );
}
