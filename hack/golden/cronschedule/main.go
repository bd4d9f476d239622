// Golden vectors for qkcm's CronJob schedules: runs upstream's own code — github.com/robfig/cron/v3
// at the version Kubernetes v1.34.4 pins (ParseStandard, Schedule.Next) and the unexported helpers
// of k8s.io/kubernetes/pkg/controller/cronjob (formatSchedule, mostRecentScheduleTime,
// nextScheduleTime, nextScheduleTimeDuration, getJobName, getJobFromTemplate2), reached through
// go:linkname — and prints one JSON object per line. Nothing here is part of qkcm at runtime.
//
//	TZ=UTC go run . parse  | gzip -9 > parse.jsonl.gz   # spec → parse error, or the schedule's fields
//	TZ=UTC go run . next   | gzip -9 > next.jsonl.gz    # schedule × zone × reference time → successive Next times
//	TZ=UTC go run . recent | gzip -9 > recent.jsonl.gz  # CronJob × now → the controller's schedule decisions
//
// (see README.md). Run with TZ=UTC: a schedule without a time zone is interpreted in the process's Local zone,
// which the vectors emulate by handing upstream times located in the "local" zone of each row.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"
	_ "time/tzdata"
	_ "unsafe"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	_ "k8s.io/kubernetes/pkg/controller/cronjob"
	"k8s.io/utils/ptr"
)

type missedSchedulesType int

//go:linkname formatSchedule k8s.io/kubernetes/pkg/controller/cronjob.formatSchedule
func formatSchedule(cj *batchv1.CronJob, recorder record.EventRecorder) string

//go:linkname mostRecentScheduleTime k8s.io/kubernetes/pkg/controller/cronjob.mostRecentScheduleTime
func mostRecentScheduleTime(cj *batchv1.CronJob, now time.Time, schedule cron.Schedule, includeStartingDeadlineSeconds bool) (time.Time, *time.Time, missedSchedulesType, error)

//go:linkname nextScheduleTimeDuration k8s.io/kubernetes/pkg/controller/cronjob.nextScheduleTimeDuration
func nextScheduleTimeDuration(cj *batchv1.CronJob, now time.Time, schedule cron.Schedule) *time.Duration

//go:linkname nextScheduleTime k8s.io/kubernetes/pkg/controller/cronjob.nextScheduleTime
func nextScheduleTime(logger klog.Logger, cj *batchv1.CronJob, now time.Time, schedule cron.Schedule, recorder record.EventRecorder) (*time.Time, error)

//go:linkname getJobName k8s.io/kubernetes/pkg/controller/cronjob.getJobName
func getJobName(cj *batchv1.CronJob, scheduledTime time.Time) string

//go:linkname getJobFromTemplate2 k8s.io/kubernetes/pkg/controller/cronjob.getJobFromTemplate2
func getJobFromTemplate2(cj *batchv1.CronJob, scheduledTime time.Time) (*batchv1.Job, error)

// the schedules: the standard grammar, names, ranges and steps, '?', dom/dow combinations with and
// without the star bit, descriptors, @every, TZ prefixes, and malformed specs
var schedules = []string{
	"* * * * *", "*/5 * * * *", "0 * * * *", "30 2 * * *", "30 1 * * *", "0 3 * * *", "15 2,3 * * *",
	"0 0 * * *", "0 0 29 2 *", "0 12 * * 1-5", "0 0 1,15 * 3", "0 0 * * 0", "0 0 ? * MON", "0 0 1 JAN *",
	"0 0 13 * fri", "5-55/10 8-18/2 * * *", "30 6-16/4 * * 1-5", "1-5/2 * * * *", "5/15 * * * *",
	"*/1 * * * *", "0 0 1 */2 *", "0 0 * * 1/2", "0 0 1-31 * 1", "0 0 */1 * 1", "0 0 */2 * 1", "0 0 ? * ?",
	"7 */3 * * sun-sat", "0 0 31 * *", "0 0 31 4 *", "0 0 30 2 *", "59 23 31 2 *", "0 0 29 2 1",
	"45 23 * * 6", "0 0,12 1 Feb-Apr/2 Tue,Thu", "@yearly", "@annually", "@monthly", "@weekly", "@daily",
	"@midnight", "@hourly", "@every 1h30m", "@every 90s", "@every 1.5h", "@every 500ms", "@every 2m30.5s",
	"@every 0s", "@every -1h", "TZ=Europe/Berlin 0 9 * * *", "CRON_TZ=America/New_York 30 2 * * *",
	"TZ=UTC 0 0 * * *", "  0   0  *  *  *  ",
	// malformed
	"", "* * * *", "* * * * * *", "0 0 * * 7", "0 0 L * *", "60 * * * *", "0 24 * * *", "0 0 0 * *",
	"0 0 * 13 *", "5-1 * * * *", "*/0 * * * *", "1-2-3 * * * *", "1/2/3 * * * *", "-5 * * * *",
	"0 0 * * MON-", "0 0 * JANUARY *", "@reboot", "@every 1x", "@every", "@every ", "TZ=Bad/Zone 0 0 * * *",
	"a * * * *", "+5 * * * *", "0 0 * * mon,,fri", "0 0 * * ,", "99999999999999999999 * * * *",
	"@every 1h2", "@every .5s", "@every 1.h", "@every 9223372036854775807ns", "@every 9223372036854775808ns",
	"@every 3000000h", "@every 1µs", "@every 1us", "@every 0", "@every +3s", "@every -0", "@every 1h-1m",
}

var zones = []string{"", "UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe",
	"America/Sao_Paulo", "Asia/Kathmandu", "Invalid/Zone"}

var locals = []string{"UTC", "America/New_York", "Europe/Berlin"}

var refs = []string{
	"2024-03-10T06:59:30.250Z", // New York's spring forward (07:00Z)
	"2024-03-10T05:30:00Z",
	"2024-11-03T05:00:00Z", // New York's fall back (06:00Z)
	"2024-11-03T05:59:59.999999999Z",
	"2024-03-31T00:30:00Z", // Berlin's spring forward (01:00Z)
	"2024-10-26T23:45:00Z", // Berlin's fall back (01:00Z)
	"2024-10-27T00:59:00Z",
	"2024-02-28T23:30:00Z", // a leap day
	"2023-02-28T12:00:00Z",
	"2018-11-03T23:30:00Z", // Sao Paulo's midnight that does not exist (03:00Z)
	"2024-04-06T15:20:00Z", // Lord Howe's half-hour fall back
	"2024-12-31T23:59:30Z",
	"2025-06-15T08:07:06.5Z",
}

type parseVector struct {
	Spec   string `json:"spec"`
	Error  string `json:"error,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Second uint64 `json:"second,omitempty"`
	Minute uint64 `json:"minute,omitempty"`
	Hour   uint64 `json:"hour,omitempty"`
	Dom    uint64 `json:"dom,omitempty"`
	Month  uint64 `json:"month,omitempty"`
	Dow    uint64 `json:"dow,omitempty"`
	// the schedule's location: "Local" when none was given
	Location string `json:"location,omitempty"`
	DelayNs  int64  `json:"delayNs,omitempty"`
}

type nextVector struct {
	Schedule string   `json:"schedule"`
	TimeZone *string  `json:"timeZone"`
	Local    string   `json:"local"`
	From     string   `json:"from"`
	Next     []string `json:"next"`
}

type recentVector struct {
	Schedule                string  `json:"schedule"`
	TimeZone                *string `json:"timeZone"`
	Local                   string  `json:"local"`
	Creation                string  `json:"creation"`
	LastScheduleTime        *string `json:"lastScheduleTime"`
	StartingDeadlineSeconds *int64  `json:"startingDeadlineSeconds"`
	Now                     string  `json:"now"`

	Formatted   string   `json:"formatted"`
	FormatEvent []string `json:"formatEvents"`
	ParseError  string   `json:"parseError,omitempty"`

	// mostRecentScheduleTime without / with startingDeadlineSeconds
	Earliest       string   `json:"earliest,omitempty"`
	MostRecent     *string  `json:"mostRecent,omitempty"`
	Missed         int      `json:"missed,omitempty"`
	Error          string   `json:"error,omitempty"`
	EarliestDl     string   `json:"earliestDeadline,omitempty"`
	MostRecentDl   *string  `json:"mostRecentDeadline,omitempty"`
	MissedDl       int      `json:"missedDeadline,omitempty"`
	ErrorDl        string   `json:"errorDeadline,omitempty"`
	NextSchedule   *string  `json:"nextScheduleTime,omitempty"`
	NextError      string   `json:"nextScheduleTimeError,omitempty"`
	NextEvents     []string `json:"nextScheduleTimeEvents"`
	RequeueAfterNs *int64   `json:"requeueAfterNs,omitempty"`
	JobName        string   `json:"jobName,omitempty"`
	JobAnnotation  string   `json:"scheduledTimestamp,omitempty"`
	JobError       string   `json:"jobError,omitempty"`
}

func utc(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

func mustLoc(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func drain(r *record.FakeRecorder) []string {
	out := []string{}
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// parse calls cron.ParseStandard, turning its panics (a TZ= prefix without a space) into errors
func parse(spec string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return cron.ParseStandard(spec)
}

func locationName(l *time.Location) string {
	if l == time.Local {
		return "Local"
	}
	return l.String()
}

func main() {
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "parse":
		extra := []string{"TZ=Europe/Berlin", "TZ= 0 0 * * *", "CRON_TZ=Asia/Kolkata @daily", "TZ=UTC @every 1m"}
		for _, spec := range append(append([]string{}, schedules...), extra...) {
			v := parseVector{Spec: spec}
			s, err := parse(spec)
			if err != nil {
				v.Error = err.Error()
			} else {
				switch sc := s.(type) {
				case *cron.SpecSchedule:
					v.Kind = "spec"
					v.Second, v.Minute, v.Hour, v.Dom, v.Month, v.Dow = sc.Second, sc.Minute, sc.Hour, sc.Dom, sc.Month, sc.Dow
					v.Location = locationName(sc.Location)
				case cron.ConstantDelaySchedule:
					v.Kind = "every"
					v.DelayNs = int64(sc.Delay)
				}
			}
			enc.Encode(v)
		}
	case "next":
		for _, spec := range schedules {
			for _, zone := range zones {
				for _, local := range locals {
					if zone != "" && local != "UTC" {
						continue // the local zone matters only without a time zone
					}
					cj := &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: spec}}
					if zone != "" {
						cj.Spec.TimeZone = ptr.To(zone)
					}
					s, err := parse(formatSchedule(cj, nil))
					if err != nil {
						continue
					}
					for _, ref := range refs {
						t := mustTime(ref).In(mustLoc(local))
						v := nextVector{Schedule: spec, TimeZone: cj.Spec.TimeZone, Local: local, From: utc(t), Next: []string{}}
						for i := 0; i < 8; i++ {
							t = s.Next(t)
							v.Next = append(v.Next, utc(t))
						}
						enc.Encode(v)
					}
				}
			}
		}
	case "recent":
		type history struct {
			creationAgo time.Duration
			lastAgo     *time.Duration
			deadline    *int64
		}
		d := func(x time.Duration) *time.Duration { return &x }
		histories := []history{
			{creationAgo: 30 * time.Second},
			{creationAgo: 5 * time.Minute},
			{creationAgo: 90 * time.Minute, deadline: ptr.To[int64](200)},
			{creationAgo: 26 * time.Hour, lastAgo: d(61 * time.Minute)},
			{creationAgo: 26 * time.Hour, lastAgo: d(3 * time.Minute), deadline: ptr.To[int64](10)},
			{creationAgo: 3 * time.Hour, deadline: ptr.To[int64](3600)},
			{creationAgo: 300 * 24 * time.Hour},
			{creationAgo: 1000 * 24 * time.Hour, deadline: ptr.To[int64](100000)},
			{creationAgo: 40 * 24 * time.Hour, lastAgo: d(35 * 24 * time.Hour)},
			{creationAgo: 2 * time.Hour, lastAgo: d(0)},
		}
		recentZones := []string{"", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Invalid/Zone"}
		recentRefs := []string{refs[0], refs[2], refs[4], refs[5], refs[7], refs[10], refs[12]}
		for _, spec := range schedules {
			if _, err := parse(spec); err != nil && spec != "" && spec != "0 0 * * 7" {
				continue // the parse vectors cover malformed specs
			}
			for _, zone := range recentZones {
				for _, local := range locals[:2] {
					if zone != "" && local != "UTC" {
						continue
					}
					for _, ref := range recentRefs {
						for _, h := range histories {
							loc := mustLoc(local)
							now := mustTime(ref).In(loc)
							creation := now.Add(-h.creationAgo).Truncate(time.Second)
							cj := &batchv1.CronJob{
								ObjectMeta: metav1.ObjectMeta{Name: "mycronjob", Namespace: "default",
									CreationTimestamp: metav1.Time{Time: creation}, UID: "1a2b3c"},
								Spec: batchv1.CronJobSpec{Schedule: spec, StartingDeadlineSeconds: h.deadline},
							}
							if zone != "" {
								cj.Spec.TimeZone = ptr.To(zone)
							}
							v := recentVector{Schedule: spec, TimeZone: cj.Spec.TimeZone, Local: local, Creation: utc(creation),
								StartingDeadlineSeconds: h.deadline, Now: utc(now), NextEvents: []string{}}
							if h.lastAgo != nil {
								last := now.Add(-*h.lastAgo).Truncate(time.Second)
								cj.Status.LastScheduleTime = &metav1.Time{Time: last}
								v.LastScheduleTime = ptr.To(utc(last))
							}
							rec := record.NewFakeRecorder(100)
							v.Formatted = formatSchedule(cj, rec)
							v.FormatEvent = drain(rec)
							s, err := parse(v.Formatted)
							if err != nil {
								v.ParseError = err.Error()
								enc.Encode(v)
								continue
							}
							e, m, missed, err := mostRecentScheduleTime(cj, now, s, false)
							v.Earliest, v.Missed = utc(e), int(missed)
							if m != nil {
								v.MostRecent = ptr.To(utc(*m))
							}
							if err != nil {
								v.Error = err.Error()
							}
							e, m, missed, err = mostRecentScheduleTime(cj, now, s, true)
							v.EarliestDl, v.MissedDl = utc(e), int(missed)
							if m != nil {
								v.MostRecentDl = ptr.To(utc(*m))
							}
							if err != nil {
								v.ErrorDl = err.Error()
							}
							n, err := nextScheduleTime(klog.Background(), cj, now, s, rec)
							if n != nil {
								v.NextSchedule = ptr.To(utc(*n))
							}
							if err != nil {
								v.NextError = err.Error()
							}
							v.NextEvents = drain(rec)
							if r := nextScheduleTimeDuration(cj, now, s); r != nil {
								v.RequeueAfterNs = ptr.To(int64(*r))
							}
							if n != nil {
								v.JobName = getJobName(cj, *n)
								job, err := getJobFromTemplate2(cj, *n)
								if err != nil {
									v.JobError = err.Error()
								} else {
									v.JobAnnotation = job.Annotations[batchv1.CronJobScheduledTimestampAnnotation]
								}
							}
							enc.Encode(v)
						}
					}
				}
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: cronschedule parse|next|recent")
		os.Exit(2)
	}
}
