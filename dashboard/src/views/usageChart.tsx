/**
 * The credit-over-time chart (uPlot), loaded with its library only when the Usage tab draws it: the
 * first page does not carry the chart code.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

const money = (dollars: number) => `$${dollars.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

export type ChartDay = { date: string; credit_cents: number; charged_cents: number };

export default function UsageChart({ days }: { days: ChartDay[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const width = () => Math.max(200, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        series: [
          {},
          { label: "Credit", stroke: "#2f5bd3", width: 2, value: (_u, v) => (v == null ? "—" : money(v)) },
          { label: "Charged that day", stroke: "#b3261e", width: 1, value: (_u, v) => (v == null ? "—" : money(v)) },
        ],
        // The value axis as wide as its longest label (large balances included).
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => money(t)), size: (_u, values) => (values?.length ? Math.max(...values.map((v) => v.length)) * 7 + 18 : 64) }],
        scales: { x: { time: true } },
      },
      [xs, days.map((d) => d.credit_cents / 100), days.map((d) => d.charged_cents / 100)],
      el,
    );
    const resize = () => plot.setSize({ width: width(), height: 220 });
    window.addEventListener("resize", resize);
    return () => {
      window.removeEventListener("resize", resize);
      plot.destroy();
    };
  }, [days]);
  return <div ref={box} class="chart" data-testid="usage-chart" />;
}
